"""The review workbook: the review queue as an .xlsx that experts fill in Excel or LibreOffice.

Writing: an Instructions sheet and a Review sheet whose fill-in columns sit right after the question,
with a drop-down for ``decision``, a frozen header, wrapped text, and every other column locked by
sheet protection (no password: it guards against slips, it is not security). The evidence is the
full passage as plain text (markdown stripped), its chunk ids in a column of their own.

Reading: :func:`review_sheet_as_csv` turns the Review sheet back into CSV text, one record per
sheet row, so :mod:`rag_assets.curation.review_file` runs the very same parsing and validation on
it as on a CSV and its row numbers are the sheet's. A text cell is written out the way the CSV
writer neutralises it (so the reader takes it literally); a real formula cell stays ``=...`` and is
rejected in a fill-in column like a formula in a CSV.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import os
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from openpyxl import Workbook, load_workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE, Cell
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.curation.models import EDITABLE_COLUMNS, ROWS_WRITTEN, Decision
from rag_assets.text.spreadsheet import neutralise

__all__ = ["REVIEW_SHEET", "WorkbookRow", "WorkbookUnreadable", "markdown_to_text", "review_sheet_as_csv",
           "write_review_workbook", "write_workbook"]

REVIEW_SHEET = "Review"
INSTRUCTIONS_SHEET = "Instructions"
# Excel keeps at most this many characters in a cell.
CELL_LIMIT = 32_767
# Review sheet columns and their widths (in characters): what to decide on, then the fill-in
# columns, then the evidence and the identifiers.
COLUMNS: tuple[tuple[str, int], ...] = (
    ("candidate_id", 16), ("question_type", 13), ("question", 48),
    ("decision", 11), ("edited_question", 34), ("edited_answer", 34), ("notes", 28), ("reviewer", 14),
    ("reference_answer", 48), ("evidence", 90), ("chunk_ids", 22), ("source_document", 26), ("corpus_version", 16),
    (ROWS_WRITTEN, 12),
)
INSTRUCTIONS_WIDTH = 85
# A wrapped line's height, and the tallest row a spreadsheet allows (Excel: 409 points).
LINE_POINTS = 15
MAX_ROW_POINTS = 409
# A workbook this many times larger unpacked than packed is refused before it is parsed.
MAX_UNPACKED_RATIO = 50

INSTRUCTIONS: tuple[str, ...] = (
    "Reviewing generated questions",
    "",
    "Each row of the Review sheet is one question an LLM generated from the documents. Read the question, "
    "the reference answer and the evidence (the passages it was generated from), then fill the white columns "
    "next to the question. The grey columns are locked.",
    "",
    "decision (pick from the drop-down):",
    "  accept - the question is clear, answerable from the evidence, and the reference answer is right.",
    "  edit - worth keeping once fixed: write the corrected text in edited_question and/or edited_answer.",
    "  reject - wrong, unanswerable, trivial or a duplicate: it will not enter the golden set.",
    "  (left empty) - not decided yet: the row stays in the queue for the next review file.",
    "edited_question / edited_answer: only with decision 'edit'; leave the one you do not change empty.",
    "notes: optional, why you decided so (kept in the decision history).",
    "reviewer: your name, required on every decided row.",
    "",
    "Returning the file: save it as .xlsx under the same name (it names the corpus version) and drop it in "
    "the curation inbox folder. The whole file is checked first: if any row has a problem nothing is applied "
    "and the file comes back in rejected/ with a report naming sheet, row and column, so you can fix and "
    "return it again.",
)


class WorkbookUnreadable(ValueError):
    """The bytes are not a workbook this reader can take (not an .xlsx, or no review sheet)."""


@dataclass(frozen=True)
class WorkbookRow:
    """One row of the Review sheet: the outbox row plus the evidence passages in full."""

    values: Mapping[str, str]
    evidence: Sequence[SnapshotChunk]
    note: str = ""  # shown above the passages, e.g. why the row is a re-review


# ---------------------------------------------------------------- writing

_MARKDOWN = MarkdownIt("commonmark").enable("table")
_BLOCK_ENDS = {"paragraph_close", "heading_close", "tr_close", "fence", "code_block", "blockquote_close"}


def markdown_to_text(markdown: str) -> str:
    """``markdown`` as readable plain text: markup gone, headings, paragraphs and list items on their own lines."""
    out: list[str] = []
    for token in _MARKDOWN.parse(markdown):
        if token.type == "list_item_open":
            out.append("- ")
        elif token.type in ("fence", "code_block"):
            out.append(token.content)
        elif token.type == "inline":
            for child in token.children or ():
                if child.type in ("text", "code_inline"):
                    out.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    out.append("\n" if child.type == "hardbreak" else " ")
        elif token.type in ("th_close", "td_close"):
            out.append(" | ")
        if token.type in _BLOCK_ENDS:
            out.append("\n")
    lines = [line.rstrip(" |").rstrip() for line in "".join(out).split("\n")]
    return "\n".join(line for line in lines if line).strip()


def _cell_text(text: str) -> str:
    clean = ILLEGAL_CHARACTERS_RE.sub("", text)
    if len(clean) <= CELL_LIMIT:
        return clean
    note = "\n[cut: a spreadsheet cell holds at most 32,767 characters; the JSONL review file has it whole]"
    return clean[: CELL_LIMIT - len(note)] + note


def _put(cell: Cell, text: str) -> None:
    """A text cell that stays text: openpyxl would store a string starting with '=' as a formula."""
    cell.value = _cell_text(text)
    cell.data_type = "s"


def _evidence_text(chunks: Sequence[SnapshotChunk]) -> str:
    return "\n\n".join(markdown_to_text(chunk.text) for chunk in chunks)


def _row_height(values: Mapping[str, str], columns: Sequence[tuple[str, int]] = COLUMNS) -> float:
    """Points for the row's tallest wrapped cell: spreadsheets do not size rows of a written file."""
    lines = 1
    for name, width in columns:
        text = values.get(name) or ""
        lines = max(lines, sum(math.ceil(max(len(part), 1) / (width * 1.1)) for part in text.split("\n")))
    return min(MAX_ROW_POINTS, LINE_POINTS * lines + 4)


def write_review_workbook(rows: Sequence[WorkbookRow], path: Path) -> Path:
    """Write the review workbook to ``path`` atomically (temporary file beside it, then replace)."""
    table = []
    for row in rows:
        values = dict(row.values)
        values["evidence"] = "\n\n".join(filter(None, [row.note, _evidence_text(row.evidence)]))
        values["chunk_ids"] = "\n".join(chunk.chunk_id for chunk in row.evidence)
        values[ROWS_WRITTEN] = str(len(rows))  # as the CSV writer does: the reader can tell a sheet that lost rows
        table.append(values)
    return write_workbook(path, INSTRUCTIONS, COLUMNS, EDITABLE_COLUMNS, table, {"decision": (
        [d.value for d in Decision], "Pick accept, reject or edit (or leave it empty).")})


def write_workbook(path: Path, instructions: Sequence[str], columns: Sequence[tuple[str, int]],
                   editable: Sequence[str], table: Sequence[Mapping[str, str]],
                   choices: Mapping[str, tuple[Sequence[str], str]]) -> Path:
    """An Instructions sheet and a Review sheet of ``table`` (one mapping per row, keyed by column name)
    whose ``editable`` columns alone are unlocked, ``choices`` giving a column its drop-down values and the
    message a wrong value gets; written to ``path`` atomically (temporary file beside it, then replace)."""
    book = Workbook()
    guide = book.active
    guide.title = INSTRUCTIONS_SHEET
    guide.column_dimensions["A"].width = INSTRUCTIONS_WIDTH
    for number, line in enumerate(instructions, start=1):
        cell = guide.cell(number, 1)
        _put(cell, line)
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        guide.row_dimensions[number].height = _row_height({"instructions": line}, (("instructions", INSTRUCTIONS_WIDTH),))
    guide["A1"].font = Font(bold=True, size=14)
    guide.row_dimensions[1].height = 22
    guide.sheet_properties.pageSetUpPr.fitToPage = True
    guide.page_setup.fitToWidth, guide.page_setup.fitToHeight = 1, 0

    sheet = book.create_sheet(REVIEW_SHEET)
    names = [name for name, _ in columns]
    locked_fill = PatternFill("solid", fgColor="EEF0F3")
    for index, (name, width) in enumerate(columns, start=1):
        head = sheet.cell(1, index, name)
        head.font = Font(bold=True)
        sheet.column_dimensions[get_column_letter(index)].width = width
    for number, values in enumerate(table, start=2):
        sheet.row_dimensions[number].height = _row_height(values, columns)
        for index, name in enumerate(names, start=1):
            cell = sheet.cell(number, index)
            _put(cell, values.get(name) or "")
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            if name in editable:
                cell.protection = Protection(locked=False)
            else:
                cell.fill = locked_fill
    last = max(len(table) + 1, 2)
    for column, (allowed, error) in choices.items():
        letter = get_column_letter(names.index(column) + 1)
        validation = DataValidation(type="list", formula1='"' + ",".join(allowed) + '"', allow_blank=True,
                                    showErrorMessage=True, errorTitle=column, error=error)
        validation.add(f"{letter}2:{letter}{last}")
        sheet.add_data_validation(validation)
    sheet.freeze_panes = "A2"
    sheet.print_title_rows = "1:1"  # printed: landscape, one page wide, the header on every page
    sheet.page_setup.orientation = "landscape"
    sheet.page_setup.fitToWidth, sheet.page_setup.fitToHeight = 1, 0
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.auto_filter.ref = f"A1:{get_column_letter(len(names))}{last}"
    sheet.protection.sheet = True
    sheet.protection.formatColumns = False  # widths and heights stay adjustable, filtering stays possible
    sheet.protection.formatRows = False
    sheet.protection.autoFilter = False
    book.active = 0

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        book.save(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# ---------------------------------------------------------------- reading


def _as_text(cell: Cell) -> str:
    """The cell as the CSV reader should see it (see the module docstring)."""
    value = cell.value
    if value is None:
        return ""
    if cell.data_type == "f":
        return str(value)
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _open(data: bytes) -> Workbook:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile:
        raise WorkbookUnreadable("not an .xlsx workbook (not a zip archive); save it as an Excel workbook (.xlsx)") from None
    if unpacked > MAX_UNPACKED_RATIO * max(len(data), 100_000):
        raise WorkbookUnreadable(f"the workbook unpacks to {unpacked:,} bytes, too large for a review file")
    try:
        return load_workbook(io.BytesIO(data), data_only=False)
    except Exception as error:  # openpyxl raises anything from KeyError to XML errors on a broken file
        raise WorkbookUnreadable(f"not a readable .xlsx workbook: {error}") from None


def review_sheet_as_csv(data: bytes) -> tuple[str, str]:
    """(sheet name, CSV text of it): the sheet named Review, or the only sheet of the workbook."""
    book = _open(data)
    if REVIEW_SHEET in book.sheetnames:
        sheet = book[REVIEW_SHEET]
    elif len(book.worksheets) == 1:
        sheet = book.worksheets[0]
    else:
        raise WorkbookUnreadable(
            f"no sheet named {REVIEW_SHEET!r} (sheets: {', '.join(book.sheetnames)}); keep the Review sheet's name")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in sheet.iter_rows(min_row=1, max_row=sheet.max_row):
        writer.writerow([_as_text(cell) for cell in row])
    return sheet.title, out.getvalue()
