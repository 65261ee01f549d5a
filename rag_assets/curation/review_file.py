"""Read an expert's review file (CSV, JSONL or the .xlsx review workbook) back into validated decisions.

All or nothing: :func:`read_review_file` returns a :class:`ReviewFile` only when every row is
valid, and otherwise raises :class:`ReviewFileRejected` listing every problem it found, each
naming the row (as a spreadsheet shows it: the CSV header is row 1; for JSONL the line number)
and the field. Nothing from a rejected file is ever applied.

The CSV side undoes what :mod:`rag_assets.curation.review_writer` does: a leading apostrophe the
writer put before a formula character is stripped again. A cell in an expert-editable column that
still starts like a formula (OWASP's rule: ``=``, ``+``, ``-``, ``@``, tab or CR, unless a plain
number) is rejected rather than guessed at. JSONL is never opened in a spreadsheet, so its strings
are taken literally (no apostrophe stripping, no formula rule). In both, a cell with a control
character (:mod:`rag_assets.text.control`) is rejected, and a file whose row count differs from
its ``rows_written`` column lost rows and is rejected, as is a CSV with a header and no data rows,
and one whose last row has no line break after it unless its ``rows_written`` cell (the last
column) shows the row whole: a file cut inside its last cell still parses, short of its text. A
workbook's review sheet is turned into CSV text by :mod:`rag_assets.curation.workbook` and then
read exactly as a CSV; its problems also name the sheet.

A CSV is decoded by rule: a UTF-8 BOM means UTF-8, else valid UTF-8 is UTF-8, else it is taken as
cp1252 (what Excel on Windows writes when it saves "CSV" without "UTF-8").

The decision and reviewer rules run through great-expectations (see
:mod:`rag_assets.quality.expectations`) over a DataFrame indexed by row number.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from rag_assets.curation.models import (
    EDIT_COLUMN_FOR,
    EDITABLE_COLUMNS,
    OUTBOX_COLUMNS,
    REQUIRED_COLUMNS,
    ROWS_WRITTEN,
    Decision,
    ReviewFile,
    ReviewLimits,
    ReviewProblem,
    ReviewRow,
)
from rag_assets.curation.workbook import WorkbookUnreadable, review_sheet_as_csv
from rag_assets.errors import ReviewFileRejected
from rag_assets.files import FileTooLarge, read_regular_file
from rag_assets.generation.models import Candidate
from rag_assets.text.control import control_character_problem
from rag_assets.text.excerpt import excerpt
from rag_assets.text.spreadsheet import formula_cell, formula_message, restore

__all__ = ["REVIEW_FORMATS", "declared_version", "formula_problem", "read_review_file",
           "refuse_undoable", "spreadsheet_cell", "unsupported_reason"]

#: The one set of review file suffixes (suffix -> format): the inbox takes these and rejects the rest.
REVIEW_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".xlsx": "xlsx"}
_DELIMITERS = (",", ";", "\t")
_DELIMITER_NAMES = {",": "','", ";": "';'", "\t": "tab"}
_DECISIONS = tuple(decision.value for decision in Decision)
_KNOWN_COLUMNS = frozenset(OUTBOX_COLUMNS)
_FIELD_ORDER = {name: position for position, name in enumerate(OUTBOX_COLUMNS)}


@dataclass
class _Record:
    """One data row with a cleaned value (None when empty) for every known column it has."""

    row: int
    values: dict[str, str | None]

    def get(self, column: str) -> str | None:
        return self.values.get(column)


class _Rejected(Exception):
    def __init__(self, *problems: ReviewProblem) -> None:
        self.problems = list(problems)


def _file_problem(message: str) -> _Rejected:
    return _Rejected(ReviewProblem(None, None, message))


def read_review_file(
    path: Path, known_candidates: Mapping[str, str], limits: ReviewLimits = ReviewLimits()
) -> ReviewFile:
    """Validate the review file at ``path`` and return its decided rows.

    ``known_candidates`` maps every candidate id that may be reviewed to its corpus version.
    Raises :class:`ReviewFileRejected` with every problem found; never returns a partial result.
    """
    path = Path(path)
    try:
        return _read(path, known_candidates, limits)
    except _Rejected as rejected:
        raise ReviewFileRejected(str(path), _sorted(rejected.problems)) from None


def _read(path: Path, known_candidates: Mapping[str, str], limits: ReviewLimits) -> ReviewFile:
    file_format = REVIEW_FORMATS.get(path.suffix.lower())
    if file_format is None:
        raise _file_problem(unsupported_reason(path))
    data = _read_bytes(path, limits)
    text, parse_format, sheet = _text(data, file_format)
    try:
        rows, undecided, corpus_version = _parse_and_validate(text, parse_format, known_candidates, limits)
    except _Rejected as rejected:
        if sheet is None:
            raise
        raise _Rejected(*(replace(problem, sheet=sheet) for problem in rejected.problems)) from None
    return ReviewFile(
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        file_format=file_format,
        corpus_version=corpus_version,
        rows=rows,
        undecided=undecided,
        sheet=sheet,
    )


def unsupported_reason(path: Path) -> str:
    """Why ``path`` (a link, a folder, or a file of another type) is not a review file."""
    *most, last = REVIEW_FORMATS
    accepted = f"{', '.join(most)} or {last}"
    if path.is_symlink():
        return "a symbolic link; the inbox takes the review file itself, not a link to it (links are not followed)"
    if path.is_dir():
        return f"a folder; the inbox takes review files ({accepted}) directly, not folders"
    what = f"unsupported file type {path.suffix!r}" if path.suffix else "file has no suffix"
    return f"{what}; save the review file as {accepted}"


def declared_version(path: Path, limits: ReviewLimits = ReviewLimits()) -> str | None:
    """The corpus version most rows of a review file name, parsed as :func:`read_review_file` parses
    it (any delimiter, header case, blank or undecided first rows, a workbook's review sheet), or
    None when it names none."""
    file_format = REVIEW_FORMATS.get(path.suffix.lower())
    if file_format is None:
        return None
    try:
        text, parse_format, _ = _text(_read_bytes(path, limits), file_format)
        records, _ = _parse_csv(text) if parse_format == "csv" else _parse_jsonl(text)
    except _Rejected:
        return None
    return _corpus_version([record for record in records if record is not None])[0] or None


def _text(data: bytes, file_format: str) -> tuple[str, str, str | None]:
    """The file as text to parse, the parser to use (csv or jsonl), and the sheet it came from."""
    if file_format != "xlsx":
        return _decode(data), file_format, None
    try:
        sheet, text = review_sheet_as_csv(data)
    except WorkbookUnreadable as error:
        raise _file_problem(str(error)) from None
    return text, "csv", sheet


def _parse_and_validate(
    text: str, file_format: str, known_candidates: Mapping[str, str], limits: ReviewLimits
) -> tuple[tuple[ReviewRow, ...], int, str]:
    if not text.strip():
        raise _file_problem("file is empty: no header row" if file_format == "csv" else "file is empty: no JSON lines")
    records, problems = _parse_csv(text) if file_format == "csv" else _parse_jsonl(text)
    if not records and not problems:
        raise _file_problem("file has a header row but no data rows (was it cut short?): nothing to import")
    if len(records) > limits.max_rows:
        raise _file_problem(f"file has {len(records):,} data rows, over the {limits.max_rows:,}-row limit")
    complete = [record for record in records if record is not None]
    problems.extend(_completeness_problems(complete, len(records)))
    validated = _validate(complete, known_candidates, problems)
    if problems:
        raise _Rejected(*problems)
    return validated


def _read_bytes(path: Path, limits: ReviewLimits) -> bytes:
    """The file's bytes, never read through a link (see ``rag_assets.files``)."""
    try:
        return read_regular_file(path, max_bytes=limits.max_bytes)
    except FileTooLarge as error:
        raise _file_problem(limits.size_problem(error.size) or f"file is over the {limits.max_bytes:,}-byte limit") from None
    except OSError as error:
        raise _file_problem(f"cannot read the file: {error.strerror or error}") from None


def _decode(data: bytes) -> str:
    """BOM -> UTF-8; valid UTF-8 -> UTF-8; anything else -> cp1252 (Excel's "CSV" on Windows)."""
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data[len(codecs.BOM_UTF8):].decode("utf-8")
        except UnicodeDecodeError as error:
            raise _file_problem(f"starts with a UTF-8 mark but is not valid UTF-8 (invalid byte at offset "
                                f"{error.start + len(codecs.BOM_UTF8)}); save the file as UTF-8") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError as error:
        raise _file_problem(
            f"neither UTF-8 nor Windows-1252 (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "save the file as CSV UTF-8"
        ) from None


# --- CSV -------------------------------------------------------------------------------------


def _normalise_name(name: str) -> str:
    return name.strip().lstrip("\ufeff").strip().lower()


def _split(text: str, delimiter: str) -> list[str] | None:
    """``text`` (one record) split on ``delimiter``, or None when it does not parse."""
    try:
        return next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True), [])
    except csv.Error:
        return None


def _detect_delimiter(header_line: str) -> str:
    """The delimiter that splits the header into the most known column names (then most fields)."""
    best, best_score = ",", (-1, -1)
    for delimiter in _DELIMITERS:
        names = _split(header_line, delimiter)
        if names is None:
            continue
        score = (len({_normalise_name(n) for n in names} & _KNOWN_COLUMNS), len(names))
        if score > best_score:
            best, best_score = delimiter, score
    return best


def spreadsheet_cell(raw: str) -> tuple[str | None, str | None]:
    """(cleaned value or None, the formula character it starts with or None): the one reading of a cell of a
    file a person filled in a spreadsheet (a review, a judge review), where an editable cell starting with a
    formula character is a :func:`formula_problem`.

    The writer's escaping apostrophe (see :mod:`rag_assets.text.spreadsheet`) is stripped and the
    rest taken literally. Otherwise strip surrounding whitespace and apply OWASP's CSV-injection
    rule (:func:`~rag_assets.text.spreadsheet.formula_cell`): a formula unless it is a plain
    number such as ``-3.5``."""
    restored = restore(raw)
    if restored != raw:
        return restored.strip() or None, None
    value = raw.strip()
    return (value, formula_cell(raw)) if value else (None, None)


def control_problems(row: int, column: str, value: str | None) -> list[ReviewProblem]:
    """The control-character rule of :mod:`rag_assets.text.control`, for one cell."""
    problem = control_character_problem(value) if value else None
    return [ReviewProblem(row, column, f"{problem}; remove it")] if problem else []


def formula_problem(row: int, column: str, character: str) -> ReviewProblem:
    return ReviewProblem(row, column, formula_message(character))


def _parse_csv(text: str) -> tuple[list[_Record | None], list[ReviewProblem]]:
    """Records (None for a row too broken to check further) and the problems found on the way."""
    first_line = next((line for line in io.StringIO(text, newline="") if line.strip()), "")
    delimiter = _detect_delimiter(first_line)
    raw_lines: list[str] = []

    def lines() -> Iterator[str]:
        for line in io.StringIO(text, newline=""):
            raw_lines.append(line)
            yield line

    reader = csv.reader(lines(), delimiter=delimiter, strict=True)
    problems: list[ReviewProblem] = []
    records: list[_Record | None] = []
    header: list[str] | None = None
    row = 0
    last: tuple[int, str, list[str]] | None = None  # the last data row, while nothing follows it
    while True:
        raw_lines.clear()
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            hint = " (a quoted cell is never closed: was the file cut short?)" if "end of data" in str(error) else ""
            problems.append(ReviewProblem(row + 1, None, f"malformed CSV: {error}{hint}"))
            last = None
            break
        row += 1
        if not any(cell.strip() for cell in fields):
            last = None
            continue  # a blank spreadsheet row
        if header is None:
            header = [_normalise_name(name) for name in fields]
            header_problems = _header_problems(header, "column", None)
            if header_problems:
                raise _Rejected(*header_problems)
            continue
        last = (row, header[min(len(fields), len(header)) - 1], fields)
        if len(fields) != len(header):
            problems.append(ReviewProblem(row, None, _field_count_message(fields, header, delimiter, raw_lines)))
            records.append(None)
            continue
        values: dict[str, str | None] = {}
        for name, raw in zip(header, fields):
            if name not in _KNOWN_COLUMNS or name in values:
                continue
            value, formula = spreadsheet_cell(raw)
            if formula is not None and name in EDITABLE_COLUMNS:
                problems.append(formula_problem(row, name, formula))
            problems.extend(control_problems(row, name, value))
            values[name] = value
        records.append(_Record(row, values))
    if header is None:
        raise _Rejected(*problems) if problems else _file_problem("file is empty: no header row")
    if last is not None and not text.endswith(("\n", "\r")):
        problems.extend(_cut_short_problem(header, len(records), *last))
    return records, problems


def _name(name: str) -> str:
    return excerpt(name, quote=False)


def _cut_short_problem(header: list[str], data_rows: int, row: int, column: str,
                       fields: list[str]) -> list[ReviewProblem]:
    """The last data row when nothing shows it is whole. Spreadsheets end a CSV with a line break (Google
    Sheets does not); a file cut inside its last cell has none and still parses, so without a line
    break only the writer's last column, ``rows_written`` with the file's row count, proves the row whole."""
    if header[-1] == ROWS_WRITTEN and len(fields) == len(header) and fields[-1].strip() == str(data_rows):
        return []
    return [ReviewProblem(row, column, (
        f"the file ends inside this row (no line break after its last cell) and {ROWS_WRITTEN} does not confirm the "
        "row is whole: the file was probably cut short; save or export the whole file again"))]


def _header_problems(names: list[str], noun: str, row: int | None) -> list[ReviewProblem]:
    """Duplicate and missing names: in the CSV header (a file-level problem, ``row`` None) or
    among one JSONL object's keys (``row`` its line)."""
    problems = []
    counts = Counter(name for name in names if name)
    duplicated = [name for name, count in counts.items() if count > 1]
    if duplicated:
        problems.append(ReviewProblem(row, ", ".join(map(_name, duplicated)), f"duplicate {noun}(s): {', '.join(map(_name, duplicated))}"))
    missing = [name for name in REQUIRED_COLUMNS if name not in counts]
    if missing:
        problems.append(ReviewProblem(row, ", ".join(missing), f"missing {noun}(s): {', '.join(missing)}"))
    return problems


def _field_count_message(fields: list[str], header: list[str], delimiter: str, raw_lines: list[str]) -> str:
    message = f"expected {len(header)} fields, found {len(fields)}"
    raw = "".join(raw_lines)
    for other in _DELIMITERS:
        if other != delimiter and len(_split(raw, other) or ()) == len(header):
            return (
                f"{message}: the row splits into {len(header)} fields on {_DELIMITER_NAMES[other]}, but the header "
                f"uses {_DELIMITER_NAMES[delimiter]}; save the whole file with one delimiter"
            )
    return message


# --- JSONL -----------------------------------------------------------------------------------


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _parse_jsonl(text: str) -> tuple[list[_Record | None], list[ReviewProblem]]:
    problems: list[ReviewProblem] = []
    records: list[_Record | None] = []
    # split on \n only: JSON strings may hold U+2028 and friends, which str.splitlines splits on
    for row, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(ReviewProblem(row, None, f"not valid JSON: {error.msg} (column {error.colno})"))
            records.append(None)
            continue
        if not isinstance(item, dict):
            problems.append(ReviewProblem(row, None, f"expected a JSON object, found {_json_kind(item)}"))
            records.append(None)
            continue
        keys = {_normalise_name(key): key for key in reversed(list(item))}  # first spelling wins
        line_problems = _header_problems([_normalise_name(key) for key in item], "key", row)
        values: dict[str, str | None] = {}
        for name in OUTBOX_COLUMNS:
            if name not in keys:
                continue
            value = item[keys[name]]
            if value is not None and not isinstance(value, str):
                line_problems.append(ReviewProblem(row, name, f"expected a string or null, found {_json_kind(value)}"))
                continue
            line_problems.extend(control_problems(row, name, value))
            values[name] = (value or "").strip() or None
        problems.extend(line_problems)
        records.append(None if line_problems else _Record(row, values))
    return records, problems


# --- the rules -------------------------------------------------------------------------------

_EDITED = ("edited_question", "edited_answer")


def _check_with_great_expectations(decided: list[_Record]) -> tuple[set[int], list[ReviewProblem]]:
    """Decision in accept/reject/edit and reviewer present, via great-expectations over a frame
    indexed by row number. Returns the rows whose decision is invalid, and the problems."""
    if not decided:
        return set(), []
    import great_expectations as gx
    import pandas as pd

    from rag_assets.quality.expectations import validate_frame

    frame = pd.DataFrame(
        {
            "decision": [(record.get("decision") or "").lower() for record in decided],
            "reviewer": [record.get("reviewer") for record in decided],
        },
        index=pd.Index([record.row for record in decided], name="row"),
        dtype=object,
    )
    expectations = [
        gx.expectations.ExpectColumnValuesToBeInSet(column="decision", value_set=list(_DECISIONS)),
        gx.expectations.ExpectColumnValuesToNotBeNull(column="reviewer"),
    ]
    by_row = {record.row: record for record in decided}
    invalid: set[int] = set()
    problems: list[ReviewProblem] = []
    for failure in validate_frame(frame, expectations):
        if failure.exception is not None:  # a bug here, not a problem of the file
            raise RuntimeError(f"great-expectations could not evaluate {failure.expectation}: {failure.exception}")
        for row in failure.row_indexes:
            if failure.column == "decision":
                invalid.add(row)
                shown = by_row[row].get("decision")
                message = f"unknown decision {excerpt(shown or '')}; use accept, reject or edit"
            else:
                message = "reviewer is empty; a decided row needs the reviewer's name"
            problems.append(ReviewProblem(row, failure.column, message))
    return invalid, problems


def _corpus_version(records: list[_Record]) -> tuple[str, int | None]:
    """The version most rows name (the first one on a tie), and the first row naming it."""
    counts = Counter(record.get("corpus_version") for record in records if record.get("corpus_version"))
    if not counts:
        return "", None
    version = counts.most_common(1)[0][0]
    return version, next(record.row for record in records if record.get("corpus_version") == version)


def _identity_problems(
    record: _Record, known_candidates: Mapping[str, str], version: str, version_row: int | None
) -> list[ReviewProblem]:
    """candidate_id and corpus_version of one decided row."""
    row, candidate, row_version = record.row, record.get("candidate_id"), record.get("corpus_version")
    problems = []
    if candidate is None:
        problems.append(ReviewProblem(row, "candidate_id", "candidate_id is empty"))
    elif candidate not in known_candidates:
        problems.append(ReviewProblem(row, "candidate_id", f"unknown candidate id {excerpt(candidate)}"))
    if row_version is None:
        problems.append(ReviewProblem(row, "corpus_version", "corpus_version is empty"))
    elif row_version != version:
        message = (
            f"mixed corpus versions: this row says {excerpt(row_version, False)}, row {version_row} says "
            f"{excerpt(version, False)}; "
            "a review file is for one corpus version"
        )
        problems.append(ReviewProblem(row, "corpus_version", message))
    elif candidate in known_candidates and known_candidates[candidate] != row_version:
        message = f"candidate {candidate} belongs to corpus version {known_candidates[candidate]}, not {excerpt(row_version, False)}"
        problems.append(ReviewProblem(row, "corpus_version", message))
    return problems


def _completeness_problems(records: list[_Record], data_rows: int) -> list[ReviewProblem]:
    """The file still has the rows it was written with (``rows_written``, see curation.models)."""
    problems, declared = [], set()
    for record in records:
        value = record.get(ROWS_WRITTEN)
        if value is None:
            continue
        if not value.isdigit():
            problems.append(ReviewProblem(record.row, ROWS_WRITTEN, f"expected the number of rows the file was "
                                                                    f"written with, found {excerpt(value)}"))
        else:
            declared.add(int(value))
    problems += [ReviewProblem(None, ROWS_WRITTEN, (
        f"the file has {data_rows:,} data rows but was written with {count:,}: " + (
            f"rows were lost (a file cut short?). Leave rows undecided rather than deleting them; to remove rows on "
            f"purpose, clear the {ROWS_WRITTEN} column" if data_rows < count else
            f"rows were added (a row copied, or rows pasted from another file?). Decide the rows the file was written "
            f"with; to add rows on purpose, clear the {ROWS_WRITTEN} column")))
        for count in sorted(declared) if count != data_rows]
    return problems


def _decision_problem(row: int, decision: Decision, edits: dict[str, str | None]) -> ReviewProblem | None:
    given = [name for name in _EDITED if edits[name] is not None]
    if decision is Decision.EDIT and not given:
        return ReviewProblem(row, ", ".join(_EDITED), "decision 'edit' needs edited_question or edited_answer")
    if decision is Decision.ACCEPT and given:
        return ReviewProblem(row, ", ".join(given), "edited text given but decision is 'accept'; use 'edit'")
    return None


def _validate(
    records: list[_Record], known_candidates: Mapping[str, str], problems: list[ReviewProblem]
) -> tuple[tuple[ReviewRow, ...], int, str]:
    """Check the decided rows; append to ``problems``; return (rows, undecided count, version)."""
    decided = [record for record in records if record.get("decision")]
    undecided = len(records) - len(decided)
    version, version_row = _corpus_version(decided or records)

    invalid_decisions, ge_problems = _check_with_great_expectations(decided)
    problems.extend(ge_problems)

    kept: dict[tuple[str, str], tuple[int, tuple[str, str | None, str | None]]] = {}
    rows: list[ReviewRow] = []
    for record in decided:
        row, candidate = record.row, record.get("candidate_id")
        problems.extend(_identity_problems(record, known_candidates, version, version_row))
        if row in invalid_decisions:
            continue
        decision = Decision((record.get("decision") or "").lower())
        edits = {name: record.get(name) for name in _EDITED}
        problem = _decision_problem(row, decision, edits)
        if problem is not None:
            problems.append(problem)
        if decision is Decision.REJECT:
            edits = dict.fromkeys(_EDITED)  # edited text on a rejected row means nothing
        if candidate is None:
            continue

        content = (decision.value, edits["edited_question"], edits["edited_answer"])
        # one reviewer deciding twice the same way is fine (the first row is kept); two reviewers
        # may disagree, which the store holds as a conflict (see rag_assets.curation.agreement)
        key = (candidate, record.get("reviewer") or "")
        if key in kept:
            first_row, first = kept[key]
            if first != content:
                message = (f"rows {first_row} and {row} disagree on candidate {excerpt(candidate, False)}: "
                           f"{_difference(first, content)}")
                problems.append(ReviewProblem(row, "candidate_id", message))
            continue
        kept[key] = (row, content)
        rows.append(
            ReviewRow(
                row=row,
                candidate_id=candidate,
                corpus_version=record.get("corpus_version") or "",
                decision=decision,
                edited_question=edits["edited_question"],
                edited_answer=edits["edited_answer"],
                notes=record.get("notes"),
                reviewer=record.get("reviewer") or "",
                shown={name: record.get(name) for name in EDIT_COLUMN_FOR if name in record.values},
            )
        )
    return tuple(rows), undecided, version


def _flat(text: str | None) -> str:
    """Text as compared for an edit: a spreadsheet may re-wrap lines or trim spaces, which is no edit."""
    return " ".join((text or "").split())


def refuse_undoable(review: ReviewFile, candidates: Mapping[str, Candidate]) -> None:
    """Raise :class:`ReviewFileRejected` when a valid file asks what its ``candidates`` (id -> candidate, every
    one the file decides) cannot take: accepting or editing a candidate whose evidence vanished from this corpus
    version (no relevant chunk left, and the file has no column for new evidence, so it can only be rejected), or
    an edit typed into a read-only column, which would be lost. The import asks it before it applies a row, and
    ``rag-assets run --review`` at the door, so a file is refused the same way, in the same words, at either."""
    problems = [ReviewProblem(row.row, "decision", f"candidate {row.candidate_id} has no relevant chunk left in "
                              "this corpus version (its evidence vanished); it can only be rejected")
                for row in review.rows
                if row.decision != Decision.REJECT and candidates[row.candidate_id].evidence_vanished]
    problems += _read_only_edits(review.rows, {c.candidate_id: {"question": c.question,
                                                                "reference_answer": c.reference_answer}
                                               for c in candidates.values()})
    if problems:
        raise ReviewFileRejected(review.path, _sorted([replace(p, sheet=review.sheet) for p in problems]))


def _read_only_edits(rows: Iterable[ReviewRow], originals: Mapping[str, Mapping[str, str]]) -> list[ReviewProblem]:
    """Decided rows whose read-only ``question`` / ``reference_answer`` cell differs from what was
    written (``originals``: candidate id -> column -> text): the edit would be lost, so the file is
    rejected naming the column the edit belongs in."""
    problems = []
    for row in rows:
        for column, value in row.shown.items():
            original = originals.get(row.candidate_id, {}).get(column)
            if original is not None and _flat(value) != _flat(original):
                problems.append(ReviewProblem(row.row, column, (
                    f"{column} is read-only and was changed; put the new text in {EDIT_COLUMN_FOR[column]} "
                    f"with decision 'edit' (and leave {column} as written)")))
    return problems


def _difference(first: tuple[str, str | None, str | None], later: tuple[str, str | None, str | None]) -> str:
    if first[0] != later[0]:
        return f"{first[0]} vs {later[0]}"
    differing = [name for name, a, b in zip(_EDITED, first[1:], later[1:]) if a != b]
    return f"{first[0]} with different {' and '.join(differing)}"


def _sorted(problems: list[ReviewProblem]) -> list[ReviewProblem]:
    def key(problem: ReviewProblem) -> tuple[int, int, int]:
        field = (problem.field or "").split(", ")[0]
        return (problem.row is not None, problem.row or 0, _FIELD_ORDER.get(field, -1) if problem.field else -1)

    return sorted(problems, key=key)
