"""The review workbook: written for experts, opened with openpyxl, filled, and read back through the
same validation and import path as a CSV (whole-file rejection naming sheet, row and column)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import openpyxl
import pytest

from rag_assets.curation.inbox import declared_corpus_version, import_review_file, inbox_files
from rag_assets.curation.queue import review_rows, workbook_rows
from rag_assets.curation.review_file import read_review_file
from rag_assets.curation.workbook import WorkbookRow, markdown_to_text, write_review_workbook
from rag_assets.generation.models import Candidate
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from tests.curation.test_rejected_files_leave_the_store_unchanged import _dump, world  # noqa: F401 (fixture)
from tests.curation.test_review_file import KNOWN, decided, outbox_row, problems_of

REVIEW_HEADER = ["candidate_id", "question_type", "question", "decision", "edited_question", "edited_answer", "notes",
                 "reviewer", "reference_answer", "evidence", "chunk_ids", "source_document", "corpus_version",
                 "rows_written"]


def _outbox_workbook(engine, version: str, path: Path) -> tuple[Path, list, dict]:
    candidates = SqlCandidateRepository(engine).for_version(version, status="pending")
    chunks = {c.chunk_id: c for c in SqlCorpusRepository(engine).snapshot_chunks(version)}
    rows = review_rows(candidates, chunks)
    return write_review_workbook(workbook_rows(candidates, chunks, rows), path), candidates, chunks


def test_markdown_is_stripped_to_readable_text() -> None:
    markdown = ("# Refunds\n\nRefunds are paid **within 14 days**, see [the policy](https://x.test/p).\n\n"
                "- by `bank transfer`\n- never in cash\n\n| plan | days |\n|---|---|\n| A | 14 |\n")
    assert markdown_to_text(markdown) == (
        "Refunds\nRefunds are paid within 14 days, see the policy.\n- by bank transfer\n- never in cash\n"
        "plan | days\nA | 14")


def test_workbook_round_trip_through_the_inbox(world) -> None:
    engine, version, _, folders = world
    path, candidates, chunks = _outbox_workbook(engine, version, folders.outbox / f"review-{version}.xlsx")

    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Instructions", "Review"]
    assert any("decision" in str(c.value) and "drop-down" in str(c.value) for c in book["Instructions"]["A"])
    sheet = book["Review"]
    assert [c.value for c in sheet[1]] == REVIEW_HEADER
    assert sheet.max_row == len(candidates) + 1 and sheet.freeze_panes == "A2"
    validation, = sheet.data_validations.dataValidation
    assert validation.type == "list" and validation.formula1 == '"accept,reject,edit"'
    assert str(validation.sqref) == f"D2:D{len(candidates) + 1}"
    assert sheet.protection.sheet is True
    for column in "ABCIJKLMN":  # identity, question, evidence, row count: locked
        assert sheet[f"{column}2"].protection.locked is True, column
    for column in "DEFGH":  # decision, edits, notes, reviewer: open to the expert
        assert sheet[f"{column}2"].protection.locked is False, column
    assert sheet["C2"].alignment.wrap_text and sheet.column_dimensions["J"].width >= 80
    # rows are tall enough for their evidence: spreadsheets do not size the rows of a written file
    assert sheet.row_dimensions[2].height >= min(409, 15 * (sheet["J2"].value.count("\n") + 1))
    assert sheet.page_setup.orientation == "landscape" and sheet.print_title_rows == "$1:$1"
    assert {sheet[f"N{row}"].value for row in range(2, sheet.max_row + 1)} == {str(len(candidates))}, "as the CSV"
    shown_by_row = {row: [chunks[r.chunk_id] for r in (c.relevant_chunks or c.source_chunks)]
                    for row, c in enumerate(candidates, start=2)}
    row, shown = next((row, shown) for row, shown in shown_by_row.items() if max(len(c.text) for c in shown) > 400)
    candidate = candidates[row - 2]
    assert sheet[f"A{row}"].value == candidate.candidate_id and sheet[f"C{row}"].value == candidate.question
    assert sheet[f"K{row}"].value == "\n".join(c.chunk_id for c in shown)
    assert sheet[f"J{row}"].value == "\n\n".join(markdown_to_text(c.text) for c in shown)  # whole, not cut at 400
    assert "[" + shown[0].chunk_id not in sheet[f"J{row}"].value

    # the expert fills three rows in the workbook and saves it into the inbox
    fills = {2: ("accept", None, None), 3: ("edit", "What is the refund period?", None), 4: ("reject", None, None)}
    for row, (decision, edited_question, notes) in fills.items():
        sheet[f"D{row}"], sheet[f"E{row}"], sheet[f"H{row}"] = decision, edited_question, "Zoë"
    sheet["G4"] = "=not a formula, typed as text"
    sheet["G4"].data_type = "s"
    folders.inbox.mkdir(parents=True)
    returned = folders.inbox / path.name
    book.save(returned)
    assert inbox_files(folders.inbox) == [returned] and declared_corpus_version(returned) == version

    repo = SqlCurationRepository(engine)
    result = import_review_file(returned, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                repo.apply_review)
    assert result.status == "applied", result.problems
    assert (result.summary["accepted"], result.summary["edited"], result.summary["rejected"]) == (1, 1, 1)
    decisions = repo.decisions()
    assert [(d["candidate_id"], d["decision"], d["source_row"], d["reviewer"]) for d in decisions] == [
        (candidates[0].candidate_id, "accept", 2, "Zoë"), (candidates[1].candidate_id, "edit", 3, "Zoë"),
        (candidates[2].candidate_id, "reject", 4, "Zoë")]
    assert decisions[2]["notes"] == "=not a formula, typed as text"
    assert (folders.processed / path.name).exists()


def save_vanished_candidate(engine, version: str) -> Candidate:
    """A re-review whose evidence is gone from ``version`` (its page was deleted): no relevant chunk is left."""
    gone = dataclasses.replace(
        SqlCandidateRepository(engine).for_version(version)[0], relevant_chunks=(), source_chunks=(),
        candidate_id=Candidate.make_id("factual", "What did the deleted page say?", (), ()),
        question="What did the deleted page say?", origin_item_id="q-goldengone1",
        change_note="regions.md @0-40\nWAS: the old text\nNOW: (not found in regions.md, and no evidence of the item "
                    "is left: reject it)")
    SqlCandidateRepository(engine).save([gone])
    return gone


def fill_workbook(path: Path, fills: dict[str, dict[str, str]]) -> Path:
    """``path``'s Review sheet with the cells ``fills`` gives (candidate id -> column letter -> value) filled in
    as an expert would, and a reviewer on those rows; saved in place."""
    book = openpyxl.load_workbook(path)
    sheet = book["Review"]
    for row in range(2, sheet.max_row + 1):
        for column, value in fills.get(sheet[f"A{row}"].value, {}).items():
            sheet[f"{column}{row}"], sheet[f"H{row}"] = value, "ana"
    book.save(path)
    return path


def test_a_workbook_asking_what_its_candidates_cannot_take_is_rejected_naming_the_sheet_too(world) -> None:
    engine, version, _, folders = world
    gone = save_vanished_candidate(engine, version)
    path, candidates, _ = _outbox_workbook(engine, version, folders.inbox / f"review-{version}.xlsx")
    other = next(c for c in candidates if c.candidate_id != gone.candidate_id)
    fill_workbook(path, {gone.candidate_id: {"D": "accept"}, other.candidate_id: {"D": "accept", "C": "Better?"}})
    rows = {c.candidate_id: row for row, c in enumerate(candidates, start=2)}
    repo = SqlCurationRepository(engine)
    before = _dump(engine)

    result = import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                repo.apply_review)

    assert result.status == "rejected" and _dump(engine) == before
    assert [str(p) for p in result.problems] == sorted([
        f"sheet Review, row {rows[gone.candidate_id]}, decision: candidate {gone.candidate_id} has no relevant chunk "
        "left in this corpus version (its evidence vanished); it can only be rejected",
        f"sheet Review, row {rows[other.candidate_id]}, question: question is read-only and was changed; put the new "
        "text in edited_question with decision 'edit' (and leave question as written)"],
        key=lambda line: int(line.split("row ")[1].split(",")[0]))


def test_an_excel_style_workbook_with_a_bad_decision_is_rejected_naming_sheet_row_and_column(world) -> None:
    engine, version, good, folders = world
    book = openpyxl.Workbook()  # made the way a spreadsheet user would: own column order, a second sheet
    sheet = book.active
    sheet.title = "Review"
    columns = ["corpus_version", "candidate_id", "decision", "reviewer", "notes", "edited_question", "edited_answer"]
    sheet.append(columns)
    sheet.append([version, good[0]["candidate_id"], "accept", "ana", None, None, None])
    sheet.append([version, good[1]["candidate_id"], "maybe", "ana", None, None, None])
    sheet.append([version, good[2]["candidate_id"], "accept", 42, "=HYPERLINK(\"http://x.test\")", None, None])
    book.create_sheet("Scratch")["A1"] = "my own notes"
    folders.inbox.mkdir(parents=True)
    path = folders.inbox / "reviewed by ana.xlsx"
    book.save(path)
    assert declared_corpus_version(path) == version  # not in the name: read from the first row

    repo = SqlCurationRepository(engine)
    before = _dump(engine)
    result = import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                repo.apply_review)
    assert result.status == "rejected"
    assert [str(p) for p in result.problems] == [
        "sheet Review, row 3, decision: unknown decision 'maybe'; use accept, reject or edit",
        "sheet Review, row 4, notes: starts with '=' (a spreadsheet formula); remove it or prefix it with an apostrophe",
    ]
    assert _dump(engine) == before and not path.exists()
    report = folders.rejected / f"{path.name}.errors.txt"
    assert "sheet Review, row 3, decision: unknown decision 'maybe'" in report.read_text()
    assert json.loads(report.with_name(f"{path.name}.errors.json").read_text())[0] == {
        "sheet": "Review", "row": 3, "field": "decision", "problem": "unknown decision 'maybe'; use accept, reject or edit"}


def test_workbooks_that_cannot_be_read(tmp_path: Path) -> None:
    not_zip = tmp_path / "review.xlsx"
    not_zip.write_bytes(b"candidate_id,decision\r\nq-001,accept\r\n")
    assert problems_of(not_zip) == [
        "file: not an .xlsx workbook (not a zip archive); save it as an Excel workbook (.xlsx)"]

    book = openpyxl.Workbook()
    book.active.title = "Sheet1"
    book.create_sheet("Sheet2")
    two_sheets = tmp_path / "two.xlsx"
    book.save(two_sheets)
    assert problems_of(two_sheets) == ["file: no sheet named 'Review' (sheets: Sheet1, Sheet2); keep the Review sheet's name"]

    empty = openpyxl.Workbook()
    empty.active.title = "Review"
    empty_path = tmp_path / "empty.xlsx"
    empty.save(empty_path)
    assert problems_of(empty_path) == ["sheet Review, file: file is empty: no header row"]


def test_a_missing_column_in_a_single_sheet_workbook_names_that_sheet(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Feuil1"
    row = decided("q-001", "accept")
    columns = [c for c in row if c != "reviewer"]
    sheet.append(columns)
    sheet.append([row[c] for c in columns])
    path = tmp_path / "review.xlsx"
    book.save(path)
    assert problems_of(path) == ["sheet Feuil1, file, reviewer: missing column(s): reviewer"]


@pytest.mark.parametrize("text", ["=SUM(A1:A3)", "-- draft", "'=quoted", "@mention"])
def test_text_that_looks_like_a_formula_round_trips_in_read_only_columns(tmp_path: Path, text: str) -> None:
    path = write_review_workbook([WorkbookRow(outbox_row("q-001", question=text, decision="accept", reviewer="ana"),
                                              [])], tmp_path / "review.xlsx")
    sheet = openpyxl.load_workbook(path)["Review"]
    assert sheet["C2"].value == text and sheet["C2"].data_type == "s"
    review = read_review_file(path, KNOWN)
    assert [(r.candidate_id, r.decision.value, r.row) for r in review.rows] == [("q-001", "accept", 2)]
    assert review.file_format == "xlsx"
