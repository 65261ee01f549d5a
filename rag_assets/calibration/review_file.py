"""The judge-review file: judged items out to the experts (.xlsx and CSV), their verdicts back in.

It travels through the curation outbox and inbox like a question review, and is named
``judge-review-<evaluation id>``: the inbox sensor routes it by that prefix, or, saved under another name, by
its columns (``is_judge_review``); the evaluation id is still read from the name. Every row repeats the
evaluation id and the judge configuration key, so an import is pinned to the evaluation and judge it
reviews. Reading validates the whole file first and returns every problem with its row and column;
nothing is returned for a file with any problem, so nothing of it can be half-applied. A file with no verdict
at all (sent back unfilled, or with its header only) is rejected too: it has nothing to import.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO

from rag_assets.calibration.models import FAIL, PASS, REVIEWED_METRICS, ExpertVerdict, JudgeConfig, JudgeReview, \
    ReviewItem, verdict
from rag_assets.curation.models import ReviewLimits, ReviewProblem
from rag_assets.curation.review_file import control_problems, formula_problem, spreadsheet_cell
from rag_assets.curation.review_writer import write_atomically
from rag_assets.curation.workbook import WorkbookUnreadable, review_sheet_as_csv, write_workbook
from rag_assets.errors import ReviewFileRejected
from rag_assets.files import FileTooLarge, read_regular_file
from rag_assets.text.excerpt import excerpt
from rag_assets.text.spreadsheet import write_spreadsheet_csv

PREFIX = "judge-review-"
_EVALUATION_ID = re.compile(r"ev-[0-9a-f]{20}")  # as the evaluation repository makes them
FORMATS = (".xlsx", ".csv")
NOT_JUDGED = "not judged"
#: What an expert may write in an expert_<metric> column, and the verdict it means (empty: not reviewed).
EXPERT_VALUES = {PASS: PASS, FAIL: FAIL, "1": PASS, "0": FAIL}
IDENTITY = ("evaluation_id", "judge_config")
EDITABLE = (*(f"expert_{m}" for m in REVIEWED_METRICS), "reviewer", "notes")
COLUMNS: tuple[tuple[str, int], ...] = (
    ("item_id", 16), ("question_type", 13), ("question", 40), ("answer", 48),
    *((name, 12) for m in REVIEWED_METRICS for name in (f"judge_{m}", f"expert_{m}")),
    ("reviewer", 14), ("notes", 28),
    *((f"why_{m}", 40) for m in REVIEWED_METRICS),
    ("contexts", 90), *((name, 26) for name in IDENTITY),
)
NAMES = tuple(name for name, _ in COLUMNS)
REQUIRED = ("item_id", *(f"judge_{m}" for m in REVIEWED_METRICS), *EDITABLE, *IDENTITY)
#: The columns no question review has (it shares notes and reviewer): how a renamed judge review is told.
JUDGE_ONLY = frozenset({*IDENTITY, *(f"{side}_{m}" for side in ("judge", "expert") for m in REVIEWED_METRICS)})
INSTRUCTIONS: tuple[str, ...] = (
    "Checking the judge",
    "",
    "Each row is an answer the RAG system gave, which the automatic judge scored. Read the question, the answer "
    "and the retrieved contexts, then say for each metric whether YOU would pass or fail it. The judge's verdict "
    "and its reasons are beside yours; disagree freely, that is what this measures.",
    "",
    "faithfulness: every claim of the answer is supported by the contexts.",
    "answer_relevance: the answer answers what was asked, all of it, with the kind of answer asked for.",
    "context_precision: the retrieved contexts are mostly useful for answering the question.",
    "context_recall: the contexts contain what the reference answer needs.",
    "",
    "expert_<metric>: pass or fail (or 1 / 0); leave it empty to skip that metric, and leave it empty where the "
    "judge's column shows 'not judged' (the judge gave no verdict there).",
    "reviewer: your name, required on every row with a verdict. notes: optional.",
    "",
    "Returning the file: keep its name and drop it in the curation inbox. The whole file is checked first: if any "
    "row has a problem nothing is applied and the file comes back in rejected/ with a report naming row and column.",
)


def file_stem(evaluation_id: str) -> str:
    return f"{PREFIX}{evaluation_id}"


def evaluation_of(name: str) -> str:
    """The evaluation id a judge-review file names: "judge-review-ev-1f....xlsx" -> "ev-1f...", also when a
    spreadsheet's "save a copy" added to the name ("judge-review-ev-1f... (1).xlsx")."""
    found = _EVALUATION_ID.search(name)
    if found:
        return found.group(0)
    start = name.lower().find(PREFIX)
    return (name[start + len(PREFIX):] if start >= 0 else name).split(".")[0]


def is_judge_review(path: Path, limits: ReviewLimits = ReviewLimits()) -> bool:
    """Whether a file is a judge review, by its name (``judge-review-<evaluation>``, as sent) or, saved under another
    name (``jr_yes-judge-review-ev-....xlsx``), by its header: a column only a judge review has. Every door uses
    this one test (``rag-assets run --review``, the inbox sensor, the calibration import), so a renamed judge review
    is never read as a question review and refused for lacking candidate_id and the rest. A file that cannot be
    read is no judge review here; the question review's reader then names why it cannot be read."""
    if path.suffix.lower() not in FORMATS:
        return False
    return path.name.lower().startswith(PREFIX) or _has_judge_columns(path, limits)


def _has_judge_columns(path: Path, limits: ReviewLimits) -> bool:
    """Whether the first row (as ``read_judge_review`` reads it) names a column of ``JUDGE_ONLY``."""
    try:
        text, _ = _text(path, _read_bytes(path, limits))
    except _Rejected:
        return False
    header = next(csv.reader(io.StringIO(text, newline="")), [])
    return any(name.strip().lower() in JUDGE_ONLY for name in header)


def _judge_cell(value: float | None) -> str:
    return NOT_JUDGED if value is None else f"{verdict(value)} ({value:.2f})"


def _row(item: ReviewItem, evaluation_id: str, config: JudgeConfig) -> dict[str, str]:
    row = {"item_id": item.item_id, "question_type": item.question_type, "question": item.question,
           "answer": item.answer, "contexts": "\n\n".join(f"[{rank}] {text}" for rank, text in
                                                          enumerate(item.contexts, start=1)),
           "evaluation_id": evaluation_id, "judge_config": config.key}
    for metric in REVIEWED_METRICS:
        row[f"judge_{metric}"] = _judge_cell(item.scores[metric])
        row[f"why_{metric}"] = item.reasons[metric]
    return row


def write_judge_review(items: Sequence[ReviewItem], evaluation_id: str, config: JudgeConfig,
                       outbox: Path) -> tuple[Path, Path]:
    """The .xlsx (drop-downs, locked judge columns) and the CSV (UTF-8 with BOM, formulas neutralised) of
    ``items`` in ``outbox``; each replaced atomically."""
    table = [_row(item, evaluation_id, config) for item in items]
    xlsx = write_workbook(outbox / f"{file_stem(evaluation_id)}.xlsx", INSTRUCTIONS, COLUMNS, EDITABLE, table,
                          {f"expert_{m}": ((PASS, FAIL), "Pick pass or fail (or leave it empty).")
                           for m in REVIEWED_METRICS})

    def write_csv(handle: IO[str]) -> None:
        write_spreadsheet_csv(handle, NAMES, ([row.get(name, "") for name in NAMES] for row in table),
                              lineterminator="\r\n")

    path = outbox / f"{file_stem(evaluation_id)}.csv"
    write_atomically(path, "utf-8-sig", write_csv)
    return xlsx, path


# ---------------------------------------------------------------- reading


class _Rejected(Exception):
    def __init__(self, problems: list[ReviewProblem]) -> None:
        self.problems = problems


def _text(path: Path, data: bytes) -> tuple[str, str | None]:
    """The file as CSV text, and the workbook sheet it came from."""
    if path.suffix.lower() == ".xlsx":
        try:
            sheet, text = review_sheet_as_csv(data)
        except WorkbookUnreadable as error:
            raise _Rejected([ReviewProblem(None, None, str(error))]) from None
        return text, sheet
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as error:
        raise _Rejected([ReviewProblem(None, None, f"not UTF-8 (invalid byte at offset {error.start}); save it as "
                                                   "CSV UTF-8")]) from None


def _records(text: str, problems: list[ReviewProblem]) -> list[tuple[int, dict[str, str]]]:
    """(spreadsheet row number, cells by column) of every non-blank data row; missing columns reject the file. Cells
    are read as the question review reads them (the writer's apostrophe taken off); an editable cell that starts like
    a formula or holds a control character is a problem, as it is there."""
    lines = list(csv.reader(io.StringIO(text, newline="")))
    if not lines:
        raise _Rejected([ReviewProblem(None, None, "file is empty: no header row")])
    header = [name.strip().lower() for name in lines[0]]
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise _Rejected([ReviewProblem(None, name, "column is missing; keep every column of the file as it was sent")
                         for name in missing])
    records = []
    for number, cells in enumerate(lines[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        row: dict[str, str] = {}
        for name, raw in zip(header, [*cells, *[""] * len(header)]):
            value, formula = spreadsheet_cell(raw)
            if name in EDITABLE:
                problems.extend([formula_problem(number, name, formula)] if formula is not None else [])
                problems.extend(control_problems(number, name, value))
            row[name] = value or ""
        records.append((number, row))
    return records


def _row_verdicts(number: int, cells: Mapping[str, str], known: Mapping[str, Mapping[str, str | None]],
                  problems: list[ReviewProblem]) -> list[ExpertVerdict]:
    item_id = cells["item_id"]
    if item_id not in known:
        problems.append(ReviewProblem(number, "item_id", f"{excerpt(item_id)} is not an item of this evaluation's sample"))
        return []
    given = {m: cells[f"expert_{m}"].lower() for m in REVIEWED_METRICS if cells[f"expert_{m}"]}
    for metric, value in given.items():
        field = f"expert_{metric}"
        if value not in EXPERT_VALUES:
            problems.append(ReviewProblem(number, field, f"{excerpt(cells[field])} is not a verdict; write pass or fail "
                                                         "(or 1 / 0), or leave it empty"))
        elif known[item_id][metric] is None:
            problems.append(ReviewProblem(number, field, "the judge gave no verdict on this metric for this item; "
                                                         "leave it empty"))
    if given and not cells["reviewer"]:
        problems.append(ReviewProblem(number, "reviewer", "required on a row with a verdict"))
    return [ExpertVerdict(item_id, m, known[item_id][m], EXPERT_VALUES[v], cells["reviewer"], cells["notes"] or None,
                          number) for m, v in given.items() if v in EXPERT_VALUES and known[item_id][m] is not None]


Expected = Callable[[str], tuple[str, Mapping[str, Mapping[str, str | None]]] | None]


def _validate(path: Path, data: bytes, expected: Expected) -> JudgeReview:
    text, sheet = _text(path, data)
    try:
        return _validate_text(path, data, text, expected)
    except _Rejected as rejected:
        raise _Rejected([replace(p, sheet=sheet) for p in rejected.problems]) from None


def _validate_text(path: Path, data: bytes, text: str, expected: Expected) -> JudgeReview:
    problems: list[ReviewProblem] = []
    records = _records(text, problems)
    evaluation_id = evaluation_of(path.name)
    sample = expected(evaluation_id)
    if sample is None:
        raise _Rejected([ReviewProblem(None, None, f"{excerpt(evaluation_id)} (from the file name) is no evaluation a "
                                                   "judge review was sent for; keep the name the file was sent with")])
    config_key, known = sample
    for number, cells in records:
        for name, want in (("evaluation_id", evaluation_id), ("judge_config", config_key)):
            if cells[name] != want:
                problems.append(ReviewProblem(number, name, f"{excerpt(cells[name])} does not match this file's "
                                                            f"{name.replace('_', ' ')} {want!r}"))
    seen: dict[str, int] = {}
    verdicts: list[ExpertVerdict] = []
    for number, cells in records:
        if cells["item_id"] in seen:
            problems.append(ReviewProblem(number, "item_id", f"{excerpt(cells['item_id'])} is also on row "
                                                             f"{seen[cells['item_id']]}"))
            continue
        seen[cells["item_id"]] = number
        verdicts.extend(_row_verdicts(number, cells, known, problems))
    if problems:
        raise _Rejected(sorted(problems, key=lambda p: p.row or 0))
    if not verdicts:
        raise _Rejected([ReviewProblem(None, None, "no verdicts filled in: write pass or fail (or 1 / 0) in the "
                                                   "expert_<metric> cells of the rows you reviewed, and your name in "
                                                   "reviewer")])
    reviewed = {v.item_id for v in verdicts}
    return JudgeReview(str(path), hashlib.sha256(data).hexdigest(), evaluation_id, config_key, tuple(verdicts),
                       len(records) - len(reviewed))


def read_judge_review(path: Path, expected: Expected, limits: ReviewLimits = ReviewLimits()) -> JudgeReview:
    """The expert verdicts of a judge-review file, or ReviewFileRejected naming every problem by row and column.

    ``expected(evaluation_id)`` gives the judge configuration key the evaluation's sample was judged with and,
    per sampled item id, the judge's verdict per metric (None: not judged), or None for an unknown evaluation.
    """
    path = Path(path)
    try:
        return _validate(path, _read_bytes(path, limits), expected)
    except _Rejected as rejected:
        raise ReviewFileRejected(str(path), rejected.problems) from None


def _read_bytes(path: Path, limits: ReviewLimits) -> bytes:
    """The file's bytes, never read through a link (see ``rag_assets.files``)."""
    try:
        return read_regular_file(path, max_bytes=limits.max_bytes)
    except FileTooLarge:
        raise _Rejected([ReviewProblem(None, None, f"file is over the {limits.max_bytes:,}-byte limit")]) from None
    except OSError as error:
        raise _Rejected([ReviewProblem(None, None, f"cannot read the file: {error.strerror or error}")]) from None
