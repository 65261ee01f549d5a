"""What a team brings back between two ``rag-assets run``: an imported golden set is in the next golden-set
version, a returned judge review is imported and its agreement check is in the summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT
from tests.defs.test_judge_calibration import review_judge_as_expert


def test_items_imported_between_two_runs_are_in_the_next_golden_version_and_evaluated(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    shutil.copytree(PROJECT_ROOT / "data" / "curation" / "sample", Settings.from_env().curation_root / "sample")
    main(["run", "--no-production"])
    (first,) = (project_env / "golden").glob("*/golden-v1.ragas.jsonl")
    rows = [json.loads(line) for line in first.read_text().splitlines()[:5]]
    team = tmp_path / "team.jsonl"
    team.write_text("".join(json.dumps({**row, "user_input": f"Asked by the team: {row['user_input']}"}) + "\n"
                            for row in rows))
    assert main(["import-golden", str(team), "--format", "ragas"]) == 0
    assert "5 new golden items imported" in capsys.readouterr().out

    main(["run", "--no-production", "--summary-json", str(tmp_path / "summary.json")])

    out = tmp_path / "newest.jsonl"
    assert main(["export", "--format", "jsonl", "--out", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    imported = [i for i in items if i["item_id"].startswith("ragas:")]
    assert len(items) == 59 and sorted(i["question"] for i in imported) == sorted(
        f"Asked by the team: {row['user_input']}" for row in rows)
    assets = json.loads((tmp_path / "summary.json").read_text())["assets"]
    (golden,) = assets["golden_set"].values()
    (evaluation,) = assets["evaluation"].values()
    assert (golden["golden_version"], golden["items"], golden["added"]) == (2, 59, 5)
    assert evaluation["items"] == 59


def test_a_judge_review_returned_with_every_verdict_flipped_fails_the_agreement_check_in_the_next_run(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    shutil.copytree(PROJECT_ROOT / "data" / "curation" / "sample", Settings.from_env().curation_root / "sample")
    main(["run", "--no-production", "--summary-json", str(tmp_path / "first.json")])
    (evaluation,) = json.loads((tmp_path / "first.json").read_text())["assets"]["evaluation"].values()
    flip = {"pass": "fail", "fail": "pass"}
    returned = review_judge_as_expert(evaluation["judge_review_workbook"], "dana", lambda metric, judged: flip[judged])
    capsys.readouterr()

    main(["run", "--no-production", "--summary-json", str(tmp_path / "second.json")])

    second = json.loads((tmp_path / "second.json").read_text())
    checks = {(c["asset"], c["check"]): c for c in second["checks"]}
    assert checks[("judge_calibration", "judge_agreement")]["passed"] is False
    assert "judge_agreement" in capsys.readouterr().out
    assert not returned.exists() and (returned.parent.parent / "processed" / returned.name).exists()
