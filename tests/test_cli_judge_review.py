"""A judge review returned between two ``rag-assets run``: the second imports it and shows its agreement check,
failed when the expert flipped every verdict, passed when the expert agreed with every one."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import openpyxl
import pytest

from rag_assets.cli import main
from tests.conftest import SharedCheckout
from tests.defs.test_judge_calibration import review_judge_as_expert

FLIP = {"pass": "fail", "fail": "pass"}


def _agree(metric: str, judged: str) -> str:
    """The judge's verdict on every metric. On faithfulness the offline judge passes every sampled item, so the
    expert's passes too leave kappa undefined there (chance agreement 1): not measurable, which fails nothing."""
    return judged


def _workbook(first_cli_run: SharedCheckout) -> Path:
    """The judge review workbook the first run's evaluation sent to the outbox."""
    (evaluation,) = first_cli_run.made.summary["assets"]["evaluation"].values()
    return Path(evaluation["judge_review_workbook"])


@pytest.mark.parametrize(("expert", "passed", "shown"), [
    (lambda metric, judged: FLIP[judged], False, r"FAILED judge_calibration\.judge_agreement \[None\]: judge agreement "
                                                 r"with your experts below κ=0\.6: "),
    (_agree, True, r"judge_calibration\.judge_agreement +passed"),
], ids=["every-verdict-flipped", "every-verdict-agreed"])
def test_a_returned_judge_review_shows_its_agreement_check_in_the_next_run(
        first_cli_run: SharedCheckout, tmp_path: Path, capsys: pytest.CaptureFixture[str], expert, passed: bool,
        shown: str):
    returned = review_judge_as_expert(str(_workbook(first_cli_run)), "dana", expert)

    main(["run", "--no-production", "--verbose", "--summary-json", str(tmp_path / "second.json")])

    second = json.loads((tmp_path / "second.json").read_text())
    checks = {(c["asset"], c["check"]): c for c in second["checks"]}
    assert checks[("judge_calibration", "judge_agreement")]["passed"] is passed, checks[("judge_calibration", "judge_agreement")]
    out = capsys.readouterr().out
    assert re.search(shown, out), out
    assert ("FAILED judge_calibration.judge_agreement" in out) is not passed
    assert not returned.exists() and (returned.parent.parent / "processed" / returned.name).exists()


def _stored(home: Path) -> dict[str, int]:
    """The rows of the judge-review tables in the store."""
    with sqlite3.connect(home / "rag_assets.db") as conn:
        return {table: conn.execute(f"select count(*) from {table}").fetchone()[0]
                for table in ("judge_review_import", "expert_verdict", "judge_calibration")}


def _header_only(workbook: Path) -> Path:
    """The workbook sent back with its header row only, saved into the inbox."""
    book = openpyxl.load_workbook(workbook)
    book["Review"].delete_rows(2, book["Review"].max_row)
    target = workbook.parent.parent / "inbox" / workbook.name
    target.parent.mkdir(parents=True, exist_ok=True)
    book.save(target)
    return target


@pytest.mark.parametrize("send_back", [
    lambda workbook: review_judge_as_expert(str(workbook), "dana", lambda metric, judged: None), _header_only,
], ids=["unfilled", "header-only"])
def test_a_judge_review_with_no_verdict_is_rejected_whole_and_records_nothing(
        first_cli_run: SharedCheckout, capsys: pytest.CaptureFixture[str], send_back):
    before = _stored(first_cli_run.home)
    returned = send_back(_workbook(first_cli_run))

    main(["run", "--no-production"])

    out = capsys.readouterr()
    assert "IntegrityError" not in out.out + out.err
    rejected = returned.parent.parent / "rejected"
    assert (rejected / returned.name).exists() and not returned.exists()
    assert not (returned.parent.parent / "processed" / returned.name).exists()
    assert "no verdicts filled in" in (rejected / f"{returned.name}.errors.txt").read_text()
    assert _stored(first_cli_run.home) == before, "no import row, no verdict, no calibration"


def test_an_import_that_fails_while_measuring_leaves_the_file_in_the_inbox_and_the_store_as_it_was(
        first_cli_run: SharedCheckout, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """The import row, the verdicts, the calibration and the move to processed/ happen together or not at all."""
    before = _stored(first_cli_run.home)
    returned = review_judge_as_expert(str(_workbook(first_cli_run)), "dana", _agree)

    def broken(verdicts):
        raise RuntimeError("the statistics failed")

    monkeypatch.setattr("rag_assets.defs.assets.calibration.calibrate_all", broken)
    assert main(["run", "--no-production"]) == 1
    assert "the statistics failed" in capsys.readouterr().err
    assert returned.exists() and not (returned.parent.parent / "processed" / returned.name).exists()
    assert _stored(first_cli_run.home) == before


def _edited(returned: Path, edit) -> Path:
    """The filled workbook in the inbox after ``edit(sheet, header)``, saved as a spreadsheet would."""
    book = openpyxl.load_workbook(returned)
    sheet = book["Review"]
    edit(sheet, [c.value for c in sheet[1]])
    book.save(returned)
    return returned


def _set(row: int, column: str, value: str):
    return lambda sheet, header: setattr(sheet.cell(row, header.index(column) + 1), "value", value)


def _copy_row_2(sheet, header) -> None:
    below = sheet.max_row + 1
    for column in range(1, sheet.max_column + 1):
        sheet.cell(below, column).value = sheet.cell(2, column).value


def test_a_rejected_judge_review_is_named_with_its_first_reason_in_the_terminal_and_the_summary_json(
        first_cli_run: SharedCheckout, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """As a rejected question review: the import's blocking check fails, naming the file and the first problem
    (row and column), and `rag-assets run` exits 1. A problem of the file and one of a row; every other reason is
    read the same way (tests/calibration/test_judge_review_file.py names each without a run)."""
    workbook = _workbook(first_cli_run)
    cases = [
        (lambda sheet, header: sheet.delete_cols(header.index("expert_context_recall") + 1),
         "sheet Review, file, expert_context_recall: column is missing"),
        (_copy_row_2, "sheet Review, row 32, item_id: "),
    ]
    for number, (edit, reason) in enumerate(cases):
        returned = _edited(review_judge_as_expert(str(workbook), "dana", _agree), edit)
        capsys.readouterr()
        summary = tmp_path / f"rejected-{number}.json"

        code = main(["run", "--no-production", "--summary-json", str(summary)])

        out = capsys.readouterr()
        assert code == 1, out
        line = (f"FAILED judge_calibration.judge_review_files_valid [None]: 1 judge-review file(s) rejected, nothing "
                f"from them applied: {returned.name}: {reason}")
        assert line in out.out, out.out
        assert "a judge_calibration_import run failed (see above)" in out.err
        assert re.search(r"judge_calibration +files_applied=0, files_rejected=1", out.out), out.out
        checks = {c["check"]: c for c in json.loads(summary.read_text())["checks"]}
        assert not checks["judge_review_files_valid"]["passed"]
        assert f"{returned.name}: {reason}" in checks["judge_review_files_valid"]["description"]
        rejected = returned.parent.parent / "rejected"
        assert (rejected / returned.name).exists() and not returned.exists()
        (rejected / returned.name).rename(tmp_path / f"{number}-{returned.name}")  # the next case's file is its own


def test_a_bad_judge_review_given_to_run_review_is_refused_in_one_line_before_anything_runs(
        first_cli_run: SharedCheckout, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """As a bad question review given with --review: exit 2, one line naming file, sheet, row and column, nothing
    staged or stored (it ran the whole lifecycle, then exited 1). A good one is staged and imported by that run."""
    before = _stored(first_cli_run.home)
    bad = _edited(review_judge_as_expert(str(_workbook(first_cli_run)), "dana", _agree), _set(3, "expert_faithfulness", "yes"))
    given = bad.rename(tmp_path / bad.name)
    capsys.readouterr()

    assert main(["run", "--no-production", "--review", str(given)]) == 2

    out = capsys.readouterr()
    assert out.err == (f"error: {given}: sheet Review, row 3, expert_faithfulness: 'yes' is not a verdict; write pass or "
                       "fail (or 1 / 0), or leave it empty; nothing staged or applied\n")
    assert out.out == "" and not list((bad.parent).iterdir()), "nothing staged in the inbox, nothing run"
    assert _stored(first_cli_run.home) == before

    elsewhere = tmp_path / "good"
    elsewhere.mkdir()
    good = review_judge_as_expert(str(_workbook(first_cli_run)), "dana", _agree)
    good = good.rename(elsewhere / good.name)
    assert main(["run", "--no-production", "--review", str(good)]) == 0
    assert _stored(first_cli_run.home)["expert_verdict"] > before["expert_verdict"]


def test_a_judge_review_saved_under_another_name_is_told_by_its_columns_at_the_door_and_imported(
        first_cli_run: SharedCheckout, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The tester's case: saved as ``jr_yes-judge-review-ev-....xlsx`` (a prefix before judge-review-), it was read as
    a question review ("missing column(s): candidate_id, corpus_version, ..."). Its columns tell it: a bad row is
    refused with the judge review's own line, a good one is staged, imported and filed away by that run."""
    before = _stored(first_cli_run.home)
    bad = _edited(review_judge_as_expert(str(_workbook(first_cli_run)), "dana", _agree), _set(3, "expert_faithfulness", "yes"))
    given = bad.rename(tmp_path / f"jr_yes-{bad.name}")
    capsys.readouterr()

    assert main(["run", "--no-production", "--review", str(given)]) == 2

    assert capsys.readouterr().err == (
        f"error: {given}: sheet Review, row 3, expert_faithfulness: 'yes' is not a verdict; write pass or fail "
        "(or 1 / 0), or leave it empty; nothing staged or applied\n")
    good = review_judge_as_expert(str(_workbook(first_cli_run)), "dana", _agree)
    given = good.rename(tmp_path / f"jr_yes-{good.name}")

    assert main(["run", "--no-production", "--review", str(given)]) == 0

    out = capsys.readouterr().out
    assert re.search(r"judge_calibration +files_applied=1, files_rejected=0", out), out
    assert _stored(first_cli_run.home)["expert_verdict"] > before["expert_verdict"]
    assert (good.parent.parent / "processed" / given.name).exists() and not (good.parent / given.name).exists()
