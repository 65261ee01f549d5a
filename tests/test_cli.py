"""The README's first command, minus the install: the CLI runs the lifecycle on the sample corpus."""

import shutil
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT


@pytest.fixture
def checkout_curation(project_env: Path) -> Path:
    """The curation folder as a checkout has it: with the bundled simulated review."""
    root = Settings.from_env().curation_root
    shutil.copytree(PROJECT_ROOT / "data" / "curation" / "sample", root / "sample")
    return root


def test_run_goes_from_corpus_to_golden_set_with_the_simulated_review(
        project_env: Path, checkout_curation: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert "simulated expert review (bundled)" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line and line.split()[0] in (
        "corpus_snapshot", "golden_set", "rag_answers", "evaluation")}
    assert "documents=49, chunks=309" in lines["corpus_snapshot"]
    assert "golden_version=1, items=54, added=54" in lines["golden_set"]
    assert "answered=54, errors=0" in lines["rag_answers"]
    assert "faithfulness=0." in lines["evaluation"] and "thresholds=profile offline" in lines["evaluation"]
    assert "recommendation=REVIEW, current=reference-k5, candidate=reference-k3" in out
    days = [line for line in out.splitlines() if line.startswith("production_sample")]
    assert [line.split()[1] for line in days] == [f"2026-11-{day}" for day in range(20, 27)]
    assert all("records=40, sample_size=30" in line for line in days)
    assert "bad_lines=2" in days[3] and "drift_alerts=0" in days[5] and "drift_alerts=0" not in days[6]
    assert "checks: 34 passed, 3 failed" in out, "the lifecycle's 9 checks pass; the planted bad day alerts"
    assert "FAILED production_sample.drift_faithfulness [2026-11-26]: DRIFT faithfulness:" in out
    assert "7 production days scored" in out
    assert (project_env / "dagster" / "dagster.yaml").exists(), "runs are kept for dagster dev"
    assert main(["run", "--verbose"]) == 0
    again = capsys.readouterr().out
    assert "new_version              False" in again and "golden_version=1, items=54, added=54" in again


def test_run_without_a_review_fails_the_golden_checks_and_says_what_to_do(
        project_env: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "--no-review"]) == 1
    captured = capsys.readouterr()
    assert "checks: 1 passed, 2 failed" in captured.out
    assert "FAILED golden_set.golden_set_pinned [" in captured.out and "FAILED golden_set.golden_set_quality [" in captured.out
    assert "production_sample" not in captured.out, "production days are scored after a successful lifecycle run"
    assert "pending=57" in captured.out
    assert "review the candidates in" in captured.err


def test_run_on_a_missing_corpus_says_so_and_exits_2(project_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "--corpus", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
