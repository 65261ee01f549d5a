"""The README's first command, minus the install: the CLI runs the lifecycle job on the sample corpus."""

from pathlib import Path

import pytest

from rag_assets.cli import main


def test_run_materializes_the_sample_corpus_and_prints_a_summary(project_env: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert "corpus_snapshot [cv-" in out
    assert "documents                49" in out
    assert (project_env / "dagster" / "dagster.yaml").exists(), "runs are kept for dagster dev"
    assert main(["run"]) == 0
    again = capsys.readouterr().out
    assert "new_version              False" in again


def test_run_on_a_missing_corpus_says_so_and_exits_2(project_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "--corpus", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
