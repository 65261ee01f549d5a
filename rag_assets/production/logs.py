"""Production query logs: what a deployed RAG system was asked and what it served.

A log folder holds ``*.jsonl`` files, one JSON object per line, one line per served query::

    {
      "query_id":  str,            optional; default: sha256 of "<file name>\\0<line number>" (16 hex)
      "timestamp": str,            required; ISO-8601 with a timezone offset or "Z"
      "question":  str,            required; not blank
      "answer":    str | null,     null (or absent) means nothing was served
      "retrieved": [               required; may be empty; ranks follow list order
        {"chunk_id": str, "text": str, "score": number}
      ],
      "citations": [{"claim": str, "chunk_id": str}],           optional
      "system_id": str,                                         optional
      "feedback":  {"rating": int | null, "comment": str | null} optional
    }

Logs are written by other systems, so bad content is expected: a line that does not follow the
schema becomes a :class:`BadLine` naming the file, the 1-based line and the offending field
(``"retrieved[1].chunk_id: expected a string"``) and the read goes on. Blank lines are ignored.

Every line goes through one bounded parse: at most :data:`MAX_LINE_BYTES` bytes and
:data:`MAX_DEPTH` levels of nesting (checked before ``json.loads``, so no RecursionError), and a
timestamp must be convertible to UTC (``9999-12-31T23:30:00-05:00`` is not). Nothing a line holds
can make the read raise: one line never stops a day.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from rag_assets.corpus.models import sha256_hex
from rag_assets.rag.models import Citation, RagResponse, RetrievedChunk
from rag_assets.text.control import control_character_problem

#: A served query with its retrieved chunks fits easily; a longer line is a producer bug or an attack.
MAX_LINE_BYTES = 1_000_000
#: A question longer than this is pasted data, not a question; it would also become a review-file cell
#: (a coverage gap) that no expert can read and that could push the file past the importer's size limit.
MAX_QUESTION_CHARS = 4_000
#: The schema nests four levels (record > retrieved > chunk > value); far deeper is never a log record.
MAX_DEPTH = 16
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]")


@dataclass(frozen=True)
class Feedback:
    rating: int | None = None
    comment: str | None = None


@dataclass(frozen=True)
class ProductionQuery:
    """One served query, validated. ``timestamp`` is timezone-aware."""

    query_id: str
    timestamp: datetime
    question: str
    answer: str | None
    retrieved: tuple[RetrievedChunk, ...]
    citations: tuple[Citation, ...] = ()
    system_id: str | None = None
    feedback: Feedback | None = None

    @property
    def day(self) -> date:
        """The UTC date: logs from servers in several time zones fall on one calendar."""
        return self.timestamp.astimezone(UTC).date()

    def to_response(self) -> RagResponse:
        """The query as the scorers see an evaluation response; a null answer counts as a failure."""
        return RagResponse(
            item_id=self.query_id, answer=self.answer, retrieved=self.retrieved, citations=self.citations,
            error=None if self.answer is not None else "no answer was served",
            error_kind=None if self.answer is not None else "bad_response",
        )


@dataclass(frozen=True)
class BadLine:
    file: str
    line: int  # 1-based
    reason: str
    day: date | None = None  # the day of the nearest valid line of the file (logs are written in time order)


@dataclass(frozen=True)
class LogRead:
    records: list[ProductionQuery]
    bad_lines: list[BadLine]


class _Invalid(ValueError):
    """A schema violation; its message is the reason reported for the line."""


def _string(value: Any, where: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if value is None:
        raise _Invalid(f"{where}: missing")
    if not isinstance(value, str):
        raise _Invalid(f"{where}: expected a string")
    problem = control_character_problem(value)
    if problem:
        raise _Invalid(f"{where}: {problem}")
    return value


def _number(value: Any, where: str) -> float:
    # bool is an int subclass; a true/false score is a producer bug, not a score
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"{where}: expected a number")
    return float(value)


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Invalid(f"{where}: expected a list")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"{where}: expected an object")
    return value


def _timestamp(value: Any) -> datetime:
    text = _string(value, "timestamp")
    try:
        parsed = datetime.fromisoformat(text)  # accepts "Z" since Python 3.11
    except ValueError:
        raise _Invalid("timestamp: not ISO-8601") from None
    if parsed.tzinfo is None:
        raise _Invalid("timestamp: no timezone (add an offset or Z)")
    try:
        parsed.astimezone(UTC)  # the day is taken in UTC; year 9999 with a negative offset overflows
    except OverflowError:
        raise _Invalid(f"timestamp: {text} is out of range (cannot be converted to UTC)") from None
    return parsed


def _nesting_depth(raw: bytes) -> int:
    """How deep the brackets of a JSON text nest (strings ignored); cheap when there are few brackets."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", raw)):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _load(raw: bytes) -> dict[str, Any]:
    """One line as a JSON object, within the size and depth limits."""
    if len(raw) > MAX_LINE_BYTES:
        raise _Invalid(f"record: the line is {len(raw):,} bytes, over the {MAX_LINE_BYTES:,}-byte limit")
    if _nesting_depth(raw) > MAX_DEPTH:
        raise _Invalid(f"record: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise _Invalid("not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise _Invalid(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    return _object(record, "record")


def _parse(record: dict[str, Any], default_id: str) -> ProductionQuery:
    question = _string(record.get("question"), "question")
    if not question.strip():
        raise _Invalid("question: blank")
    if len(question) > MAX_QUESTION_CHARS:
        raise _Invalid(f"question: {len(question):,} characters, over the {MAX_QUESTION_CHARS:,}-character limit")
    if "retrieved" not in record:
        raise _Invalid("retrieved: missing")
    retrieved = []
    for i, raw in enumerate(_list(record["retrieved"], "retrieved")):
        chunk = _object(raw, f"retrieved[{i}]")
        retrieved.append(RetrievedChunk(
            chunk_id=_string(chunk.get("chunk_id"), f"retrieved[{i}].chunk_id"),
            text=_string(chunk.get("text"), f"retrieved[{i}].text"),
            score=_number(chunk.get("score"), f"retrieved[{i}].score"),
            rank=i + 1,
        ))
    citations = []
    for i, raw in enumerate(_list(record.get("citations", []), "citations")):
        cite = _object(raw, f"citations[{i}]")
        citations.append(Citation(_string(cite.get("claim"), f"citations[{i}].claim"),
                                  _string(cite.get("chunk_id"), f"citations[{i}].chunk_id")))
    feedback = None
    if record.get("feedback") is not None:
        raw_feedback = _object(record["feedback"], "feedback")
        rating = raw_feedback.get("rating")
        if rating is not None and (isinstance(rating, bool) or not isinstance(rating, int)):
            raise _Invalid("feedback.rating: expected an integer")
        feedback = Feedback(rating, _string(raw_feedback.get("comment"), "feedback.comment", required=False))
    return ProductionQuery(
        query_id=_string(record.get("query_id"), "query_id", required=False) or default_id,
        timestamp=_timestamp(record.get("timestamp")),
        question=question,
        answer=_string(record.get("answer"), "answer", required=False),
        retrieved=tuple(retrieved),
        citations=tuple(citations),
        system_id=_string(record.get("system_id"), "system_id", required=False),
        feedback=feedback,
    )


def _nearest_days(days: list[date | None]) -> list[date | None]:
    """Each position's day, or else the day of the nearest valid line before it, else after it."""
    forward: list[date | None] = []
    for day in days:
        forward.append(day if day is not None else (forward[-1] if forward else None))
    backward: list[date | None] = []
    for day in reversed(days):
        backward.append(day if day is not None else (backward[-1] if backward else None))
    return [f if f is not None else b for f, b in zip(forward, reversed(backward))]


def read_log_file(path: Path, day: date | None = None, seen: dict[str, str] | None = None) -> LogRead:
    """Read one log file; keep only ``day`` when given. Never raises for bad content.

    A bad line is reported on the day of its nearest valid neighbour, so a day's report shows the
    bad lines written that day; a file with no valid line at all is reported on every day.
    A ``query_id`` already in ``seen`` (id -> where it was first read; updated here) is a
    duplicate: the first line is kept and the later one reported on its own day.
    """
    seen = {} if seen is None else seen
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        return LogRead([], [BadLine(path.name, 0, f"file: cannot be read: {exc.strerror or exc}")])
    parsed: list[ProductionQuery | BadLine] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            query = _parse(_load(raw), sha256_hex(f"{path.name}\0{number}")[:16])
        except _Invalid as exc:
            parsed.append(BadLine(path.name, number, str(exc)))
            continue
        if query.query_id in seen:
            parsed.append(BadLine(path.name, number, f"query_id: duplicate of {seen[query.query_id]} (the first is "
                                                     "kept)", query.day))
        else:
            seen[query.query_id] = f"{path.name} line {number}"
            parsed.append(query)
    nearest = _nearest_days([entry.day if isinstance(entry, ProductionQuery) else None for entry in parsed])
    records = [entry for entry in parsed if isinstance(entry, ProductionQuery) and (day is None or entry.day == day)]
    bad = [replace(entry, day=entry.day or near) for entry, near in zip(parsed, nearest) if isinstance(entry, BadLine)]
    return LogRead(records, [b for b in bad if day is None or b.day in (None, day)])


def log_files(folder: str | Path) -> list[Path]:
    """The log files of ``folder``, by name."""
    return sorted(Path(folder).glob("*.jsonl"))


def read_logs(folder: str | Path, day: date | None = None) -> LogRead:
    """Read every log file of ``folder``; keep only ``day`` when given.

    Never raises for bad content: invalid lines and repeated query ids are reported in
    ``bad_lines``. Records of other days are skipped silently, since they are valid, just not asked for.
    """
    records: list[ProductionQuery] = []
    bad: list[BadLine] = []
    seen: dict[str, str] = {}
    for path in log_files(folder):
        read = read_log_file(path, day, seen)
        records.extend(read.records)
        bad.extend(read.bad_lines)
    return LogRead(records, bad)


def day_digests(records: list[ProductionQuery]) -> dict[str, str]:
    """Per day, a digest of that day's records (their ids): the production_sample partition's data
    version, and what the log sensor compares to decide whether a day needs scoring again."""
    ids: dict[str, set[str]] = {}
    for record in records:
        ids.setdefault(record.day.isoformat(), set()).add(record.query_id)
    return {day: sha256_hex("\n".join(sorted(found)))[:16] for day, found in ids.items()}
