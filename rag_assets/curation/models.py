"""Expert review: the columns of a review file and the decisions read from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Decision(str, Enum):
    ACCEPT = "accept"
    REJECT = "reject"
    EDIT = "edit"


#: How many data rows the writer wrote, repeated on every row: a column survives sorting, filtering
#: and every spreadsheet's save (a trailer row would not survive a sort). A file whose row count
#: differs lost rows; an expert who removes rows on purpose clears (or deletes) this column.
ROWS_WRITTEN = "rows_written"

# The review file's columns, in the order the outbox writes them. Experts fill decision .. reviewer.
OUTBOX_COLUMNS: tuple[str, ...] = (
    "candidate_id", "corpus_version", "question_type", "question", "reference_answer", "source_document",
    "chunk_excerpt", "decision", "edited_question", "edited_answer", "notes", "reviewer", ROWS_WRITTEN,
)
REQUIRED_COLUMNS: tuple[str, ...] = (
    "candidate_id", "corpus_version", "decision", "edited_question", "edited_answer", "notes", "reviewer",
)
EDITABLE_COLUMNS: tuple[str, ...] = ("decision", "edited_question", "edited_answer", "notes", "reviewer")
#: Read-only text an expert might overwrite by mistake, and the column an edit belongs in.
EDIT_COLUMN_FOR: dict[str, str] = {"question": "edited_question", "reference_answer": "edited_answer"}


@dataclass(frozen=True)
class ReviewRow:
    """One decided row. ``row`` is the number a spreadsheet shows (the CSV header is row 1) or the
    JSONL line number, so error messages and the decision history point at the same place."""

    row: int
    candidate_id: str
    corpus_version: str
    decision: Decision
    edited_question: str | None
    edited_answer: str | None
    notes: str | None
    reviewer: str
    # the read-only cells as the file has them, to catch an edit made in the wrong column
    shown: dict[str, str | None] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ReviewProblem:
    """What is wrong, and where: ``row`` None means the file as a whole, ``field`` None the row;
    ``sheet`` names the workbook sheet when the file is a workbook."""

    row: int | None
    field: str | None
    message: str
    sheet: str | None = None

    def __str__(self) -> str:
        where = [f"sheet {self.sheet}"] if self.sheet else []
        where.append(f"row {self.row}" if self.row is not None else "file")
        if self.field:
            where.append(self.field)
        return f"{', '.join(where)}: {self.message}"


@dataclass(frozen=True)
class ReviewFile:
    """A review file that passed validation, ready to be applied in one transaction."""

    path: str
    sha256: str
    file_format: str  # csv | jsonl | xlsx
    corpus_version: str
    rows: tuple[ReviewRow, ...]
    undecided: int
    sheet: str | None = None  # the workbook's review sheet, named in a problem found once the file was read


@dataclass(frozen=True)
class ReviewLimits:
    max_bytes: int = 10_000_000
    max_rows: int = 50_000

    def size_problem(self, size: int) -> str | None:
        """Why a file of ``size`` bytes is refused, or None: decided from a stat, before anything reads it."""
        return f"file is {size:,} bytes, over the {self.max_bytes:,}-byte limit" if size > self.max_bytes else None
