"""Expert review: the columns of a review file and the decisions read from it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Decision(str, Enum):
    ACCEPT = "accept"
    REJECT = "reject"
    EDIT = "edit"


# The review file's columns, in the order the outbox writes them. Experts fill the last five.
OUTBOX_COLUMNS: tuple[str, ...] = (
    "candidate_id", "corpus_version", "question_type", "question", "reference_answer", "source_document",
    "chunk_excerpt", "decision", "edited_question", "edited_answer", "notes", "reviewer",
)
REQUIRED_COLUMNS: tuple[str, ...] = (
    "candidate_id", "corpus_version", "decision", "edited_question", "edited_answer", "notes", "reviewer",
)
EDITABLE_COLUMNS: tuple[str, ...] = ("decision", "edited_question", "edited_answer", "notes", "reviewer")


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


@dataclass(frozen=True)
class ReviewLimits:
    max_bytes: int = 10_000_000
    max_rows: int = 50_000
