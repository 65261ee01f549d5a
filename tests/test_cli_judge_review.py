"""A judge review returned between two ``rag-assets run``: the second imports it and shows its agreement check,
failed when the expert flipped every verdict, passed when the expert agreed with every one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rag_assets.cli import main
from tests.defs.test_judge_calibration import review_judge_as_expert

FLIP = {"pass": "fail", "fail": "pass"}


def _agree(metric: str, judged: str) -> str:
    """The judge's verdict on every metric. On faithfulness the offline judge passes every sampled item, so the
    expert's passes too leave kappa undefined there (chance agreement 1): not measurable, which fails nothing."""
    return judged


@pytest.mark.parametrize(("expert", "passed", "shown"), [
    (lambda metric, judged: FLIP[judged], False, r"FAILED judge_calibration\.judge_agreement \[None\]: judge agreement "
                                                 r"with your experts below κ=0\.6: "),
    (_agree, True, r"judge_calibration\.judge_agreement +passed"),
], ids=["every-verdict-flipped", "every-verdict-agreed"])
def test_a_returned_judge_review_shows_its_agreement_check_in_the_next_run(
        project_env: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], expert, passed: bool,
        shown: str):
    main(["run", "--no-production", "--summary-json", str(tmp_path / "first.json")])
    (evaluation,) = json.loads((tmp_path / "first.json").read_text())["assets"]["evaluation"].values()
    returned = review_judge_as_expert(evaluation["judge_review_workbook"], "dana", expert)
    capsys.readouterr()

    main(["run", "--no-production", "--verbose", "--summary-json", str(tmp_path / "second.json")])

    second = json.loads((tmp_path / "second.json").read_text())
    checks = {(c["asset"], c["check"]): c for c in second["checks"]}
    assert checks[("judge_calibration", "judge_agreement")]["passed"] is passed, checks[("judge_calibration", "judge_agreement")]
    out = capsys.readouterr().out
    assert re.search(shown, out), out
    assert ("FAILED judge_calibration.judge_agreement" in out) is not passed
    assert not returned.exists() and (returned.parent.parent / "processed" / returned.name).exists()
