"""Judge-review files: written for a spreadsheet, filled as one would (openpyxl), applied whole or rejected whole."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
import pytest

from rag_assets.calibration.models import JudgeConfig, ReviewItem
from rag_assets.calibration.review_file import read_judge_review, write_judge_review
from rag_assets.calibration.stats import calibrate_all
from rag_assets.curation.inbox import CurationFolders, import_review_file
from rag_assets.store.calibration_repository import SqlCalibrationRepository
from rag_assets.store.engine import get_engine

CONFIG = JudgeConfig("offline", "offline-heuristics-v1", "judge_faithfulness@2", "hashing")
EVALUATION = "ev-00000000000000000001"
METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")


def _item(item_id: str, faithfulness: float, relevance: float | None) -> ReviewItem:
    scores = {"faithfulness": faithfulness, "answer_relevance": relevance, "context_precision": 1.0,
              "context_recall": 0.0}
    return ReviewItem(item_id, "factual", f"What is {item_id}?", "=SUM(A1) is the answer.", ("first", "second"),
                      scores, {m: f"why {m}" for m in METRICS})


ITEMS = [_item("q-1", 1.0, 1.0), _item("q-2", 0.2, 0.0), _item("q-3", 0.9, None)]


@pytest.fixture
def setup(tmp_path: Path):
    folders = CurationFolders(tmp_path / "curation")
    repo = SqlCalibrationRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    xlsx, csv_path = write_judge_review(ITEMS, EVALUATION, CONFIG, folders.outbox)
    repo.record_sample(EVALUATION, CONFIG, ITEMS, xlsx.name)
    return folders, repo, xlsx, csv_path


def _fill(xlsx: Path, target: Path, cells: dict[tuple[int, str], str | None], delete: str | None = None) -> Path:
    """Type into the Review sheet as an expert would (row numbers as the spreadsheet shows them) and save."""
    book = openpyxl.load_workbook(xlsx)
    sheet = book["Review"]
    header = [c.value for c in sheet[1]]
    for (row, column), value in cells.items():
        sheet.cell(row, header.index(column) + 1).value = value
    if delete:
        sheet.delete_cols(header.index(delete) + 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    book.save(target)
    return target


def _import(path: Path, folders: CurationFolders, repo: SqlCalibrationRepository):
    return import_review_file(path, folders, {}, lambda p, _, limits: read_judge_review(p, repo.sample, limits),
                              lambda review: repo.apply_review(review, calibrate_all))


GOOD = {(2, "expert_faithfulness"): "pass", (2, "expert_answer_relevance"): "1", (2, "reviewer"): "dana",
        (3, "expert_faithfulness"): "Fail", (3, "expert_context_recall"): "pass", (3, "reviewer"): "dana",
        (3, "notes"): "recall looks fine to me"}


def test_a_filled_workbook_is_applied_once_and_filed_away(setup):
    folders, repo, xlsx, _ = setup
    book = openpyxl.load_workbook(xlsx)
    assert book.sheetnames == ["Instructions", "Review"] and book["Review"].protection.sheet
    sheet = book["Review"]
    header = [c.value for c in sheet[1]]
    assert sheet.cell(3, header.index("judge_faithfulness") + 1).value == "fail (0.20)"
    assert sheet.cell(4, header.index("judge_answer_relevance") + 1).value == "not judged"
    assert sheet.cell(2, header.index("answer") + 1).data_type == "s"  # a formula-looking answer stays text
    result = _import(_fill(xlsx, folders.inbox / xlsx.name, GOOD), folders, repo)
    assert result.status == "applied" and result.summary == {"verdicts": 4, "unreviewed": 1}
    assert result.moved_to == folders.processed / xlsx.name
    verdicts = [(v.item_id, v.metric, v.judge_verdict, v.expert_verdict, v.row) for v in repo.verdicts(CONFIG.key)]
    assert verdicts == [("q-1", "faithfulness", "pass", "pass", 2), ("q-1", "answer_relevance", "pass", "pass", 2),
                        ("q-2", "faithfulness", "fail", "fail", 3), ("q-2", "context_recall", "fail", "pass", 3)]
    corrected = _import(_fill(xlsx, folders.inbox / xlsx.name, {**GOOD, (3, "expert_context_recall"): "fail"}),
                        folders, repo)
    assert corrected.status == "applied" and corrected.moved_to.parent == folders.processed
    assert [(v.item_id, v.metric, v.expert_verdict) for v in repo.verdicts(CONFIG.key)] == [
        ("q-1", "faithfulness", "pass"), ("q-1", "answer_relevance", "pass"), ("q-2", "faithfulness", "fail"),
        ("q-2", "context_recall", "fail")]  # dana's verdicts replaced, none counted twice


def test_a_control_character_in_a_cell_an_expert_fills_is_rejected_as_in_a_question_review(setup):
    folders, repo, _, csv_path = setup
    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[1].update(expert_answer_relevance="0", reviewer="lee", notes="see\x07here")
    target = folders.inbox / csv_path.name
    target.parent.mkdir(parents=True)
    with target.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = _import(target, folders, repo)
    assert (result.status, [str(p) for p in result.problems]) == (
        "rejected", ["row 3, notes: contains the control character U+0007 at character 4; remove it"])
    assert repo.verdicts(CONFIG.key) == []


def test_the_csv_round_trips_through_a_spreadsheet_save_under_a_copy_s_name(setup):
    folders, repo, _, csv_path = setup
    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["answer"] == "'=SUM(A1) is the answer."  # neutralised for the spreadsheet
    rows[1].update(expert_answer_relevance="0", reviewer="lee")
    target = folders.inbox / f"{csv_path.stem} (1).csv"
    target.parent.mkdir(parents=True)
    with target.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert _import(target, folders, repo).status == "applied"
    assert [(v.item_id, v.metric, v.expert_verdict) for v in repo.verdicts(CONFIG.key)] == [
        ("q-2", "answer_relevance", "fail")]


@pytest.mark.parametrize(("cells", "delete", "name", "problems"), [
    ({**GOOD, (3, "expert_answer_relevance"): "maybe"}, None, None,
     ["sheet Review, row 3, expert_answer_relevance: 'maybe' is not a verdict; write pass or fail (or 1 / 0), or "
      "leave it empty"]),
    ({**GOOD, (3, "item_id"): "q-404"}, None, None,
     ["sheet Review, row 3, item_id: 'q-404' is not an item of this evaluation's sample"]),
    ({**GOOD, (2, "judge_config"): "jc-000000000000", (3, "expert_faithfulness"): "yes"}, None, None,
     [f"sheet Review, row 2, judge_config: 'jc-000000000000' does not match this file's judge config '{CONFIG.key}'",
      "sheet Review, row 3, expert_faithfulness: 'yes' is not a verdict; write pass or fail (or 1 / 0), or leave "
      "it empty"]),
    ({**GOOD, (4, "expert_answer_relevance"): "pass", (4, "reviewer"): "dana"}, None, None,
     ["sheet Review, row 4, expert_answer_relevance: the judge gave no verdict on this metric for this item; "
      "leave it empty"]),
    ({**GOOD, (2, "reviewer"): None}, None, None, ["sheet Review, row 2, reviewer: required on a row with a verdict"]),
    ({**GOOD, (3, "notes"): "=1+1"}, None, None,  # a real formula cell, as the question review rejects it
     ["sheet Review, row 3, notes: starts with '=' (a spreadsheet formula); remove it or prefix it with an apostrophe"]),
    (GOOD, "expert_context_precision", None,
     ["sheet Review, file, expert_context_precision: column is missing; keep every column of the file as it was "
      "sent"]),
    ({**GOOD, (2, "evaluation_id"): "ev-00000000000000000002"}, None, None,
     ["sheet Review, row 2, evaluation_id: 'ev-00000000000000000002' does not match this file's evaluation id "
      f"'{EVALUATION}'"]),
    (GOOD, None, "judge-review-ev-00000000000000000002.xlsx",
     ["sheet Review, file: 'ev-00000000000000000002' (from the file name) is no evaluation a judge review was sent "
      "for; keep the name the file was sent with"]),
])
def test_a_bad_file_is_rejected_whole_naming_row_and_field(setup, cells, delete, name, problems):
    folders, repo, xlsx, _ = setup
    path = _fill(xlsx, folders.inbox / (name or xlsx.name), cells, delete)
    result = _import(path, folders, repo)
    assert result.status == "rejected" and [str(p) for p in result.problems] == problems
    assert result.moved_to == folders.rejected / path.name and not path.exists()
    report = (folders.rejected / f"{path.name}.errors.txt").read_text()
    assert report.startswith(f"{path.name} was rejected; nothing from it was applied.") and problems[0] in report
    assert json.loads((folders.rejected / f"{path.name}.errors.json").read_text())[0]["sheet"] == "Review"
    assert repo.verdicts(CONFIG.key) == []  # the good rows of the file were not applied either


def test_a_judge_review_saved_under_another_name_is_told_by_its_columns(setup, tmp_path: Path):
    """By name as sent, or renamed by its columns (workbook and CSV); a question review, or a file that is none, is
    not one."""
    from rag_assets.calibration.review_file import is_judge_review
    from rag_assets.curation.models import OUTBOX_COLUMNS

    _, _, xlsx, csv_path = setup
    renamed = [path.rename(tmp_path / f"jr_yes-{path.name}") for path in (xlsx, csv_path)]
    plain = (tmp_path / "returned.csv")
    plain.write_text("item_id,expert_faithfulness,reviewer\r\nq-1,pass,dana\r\n", encoding="utf-8")
    question = tmp_path / "judge-notes.csv"
    question.write_text(",".join(OUTBOX_COLUMNS) + "\r\n", encoding="utf-8")
    binary = tmp_path / "broken.xlsx"
    binary.write_bytes(b"\xff\xfe not a workbook")
    assert [is_judge_review(path) for path in [*renamed, plain, question, binary]] == [True, True, True, False, False]
    assert is_judge_review(tmp_path / "judge-review-ev-00000000000000000001.xlsx")  # the name as sent: never opened
