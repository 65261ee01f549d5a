"""A judge review returned between two ``rag-assets run``: the second imports it and shows its agreement check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.cli import main
from tests.defs.test_judge_calibration import review_judge_as_expert


def test_a_judge_review_returned_with_every_verdict_flipped_fails_the_agreement_check_in_the_next_run(
        project_env: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
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
