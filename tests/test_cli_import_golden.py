"""``rag-assets import-golden`` then ``rag-assets run``: the next golden-set version holds the imported items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.cli import main


def test_items_imported_between_two_runs_are_in_the_next_golden_version_and_evaluated(
        project_env: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
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
    assert len(items) == 53 and sorted(i["question"] for i in imported) == sorted(
        f"Asked by the team: {row['user_input']}" for row in rows)
    assets = json.loads((tmp_path / "summary.json").read_text())["assets"]
    (golden,) = assets["golden_set"].values()
    (evaluation,) = assets["evaluation"].values()
    assert (golden["golden_version"], golden["items"], golden["added"]) == (2, 53, 5)
    assert evaluation["items"] == 53
