"""Production query logs: what a deployed RAG system was asked and what it served.

A log folder holds ``*.jsonl`` files, one JSON object per line, one line per served query::

    {
      "query_id":  str,            optional; default: sha256 of "<file name>\\0<line number>" (16 hex)
      "timestamp": str,            required; ISO-8601 with a timezone offset or "Z" (RFC 3339: "z")
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

A day is read from its own bytes only. The first read of a folder streams every file once (a line at
a time, a line over the limit only counted) into a day index kept beside the logs,
``<folder>/.rag-assets-index.json``: per day the byte ranges of its lines, its duplicate lines and the
digest of its record ids; per file its stat. Later reads seek to their day's ranges, so a day's run
holds that day's records and nothing else; adding, removing or changing a file (size, mtime, ctime
or inode) indexes the folder again. A folder that cannot be written is indexed for each read anew.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, BinaryIO

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
    try:
        number = float(value)  # an integer of 400 digits has no float: OverflowError
    except OverflowError:
        raise _Invalid(f"{where}: expected a finite number, got an integer of {len(str(value))} digits") from None
    if not math.isfinite(number):  # json.loads reads NaN and Infinity, which JSON itself does not allow
        raise _Invalid(f"{where}: expected a finite number, not {value}")
    return number


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
        # "Z" is read since Python 3.11; RFC 3339 also allows a lowercase "z", which it does not read
        parsed = datetime.fromisoformat(text[:-1] + "Z" if text.endswith("z") else text)
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


def _too_long(length: int) -> str:
    return f"record: the line is {length:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit"


def _load(raw: bytes) -> dict[str, Any]:
    """One line as a JSON object, within the size and depth limits."""
    if len(raw) > MAX_LINE_BYTES:
        raise _Invalid(_too_long(len(raw)))
    if _nesting_depth(raw) > MAX_DEPTH:
        raise _Invalid(f"record: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        record = json.loads(raw.decode("utf-8-sig"))  # a byte order mark some writers put before the first line
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
            # the same corpus chunks come back for many queries: one copy of each text for a whole day
            chunk_id=sys.intern(_string(chunk.get("chunk_id"), f"retrieved[{i}].chunk_id")),
            text=sys.intern(_string(chunk.get("text"), f"retrieved[{i}].text")),
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


_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n|$)")
#: What one ``readline`` may take: a line longer than the limit is read on in blocks and only counted.
_READ_LIMIT = MAX_LINE_BYTES + 2
INDEX_NAME = ".rag-assets-index.json"
INDEX_VERSION = 1


def _lines(handle: BinaryIO, start: int, end: int, number: int) -> Iterator[tuple[int, int, int, bytes | int]]:
    """The lines of ``handle`` between the byte offsets ``start`` and ``end`` as (line number, start, end, content),
    split as ``bytes.splitlines`` splits (``\n``, ``\r\n``, ``\r``), numbered from ``number``. A line over
    :data:`MAX_LINE_BYTES` is never held: its content is its length in bytes."""
    handle.seek(start)
    position = start
    while position < end:
        chunk = handle.readline(min(_READ_LIMIT, end - position))
        if not chunk:
            return
        if len(chunk) == _READ_LIMIT and not chunk.endswith(b"\n"):
            length = len(chunk)
            while not chunk.endswith(b"\n") and position + length < end:
                chunk = handle.readline(min(1 << 20, end - position - length))
                if not chunk:
                    break
                length += len(chunk)
            stripped = length - (1 if chunk.endswith(b"\n") else 0) - (1 if chunk.endswith(b"\r\n") else 0)
            yield number, position, position + length, stripped
            number, position = number + 1, position + length
            continue
        for match in _LINE.finditer(chunk):
            if not match.group(0):
                break
            yield number, position + match.start(), position + match.end(), match.group(1)
            number += 1
        position += len(chunk)


def _entry(raw: bytes | int, default_id: str) -> ProductionQuery | str:
    """A line as a record, or the reason it is a bad line."""
    try:
        if isinstance(raw, int):
            raise _Invalid(_too_long(raw))
        return _parse(_load(raw), default_id)
    except _Invalid as exc:
        return str(exc)


def _default_id(name: str, number: int) -> str:
    return sha256_hex(f"{name}\0{number}")[:16]


def _stat(path: Path) -> list[int]:
    """What tells whether a file changed since it was indexed (a rewrite in place changes ctime)."""
    info = path.stat()
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


class _Spans:
    """The byte ranges of one file, each of consecutive lines that fall on one day (``None``: no day)."""

    def __init__(self, name: str, into: dict[str | None, list[list]]) -> None:
        self.name, self.into, self.open = name, into, None

    def add(self, day: str | None, number: int, start: int, end: int) -> None:
        if self.open is not None and self.open[0] == day:
            self.open[1][2] = end
            return
        self.open = (day, [self.name, start, end, number])
        self.into.setdefault(day, []).append(self.open[1])


def build_index(folder: str | Path) -> dict:
    """One streaming pass over every log file of ``folder``: per day, the byte ranges of its lines (a bad
    line counts on the day of its nearest valid neighbour), its duplicate lines and the digest of its
    records; per file its stat and its own digests per day. Only the query ids are held, never a record."""
    files: dict[str, dict] = {}
    spans: dict[str | None, list[list]] = {}
    duplicates: dict[str, dict[str, str]] = {}
    ids: dict[str, list[str]] = {}
    seen: dict[str, int] = {}  # query id -> where it was first read: file number << 32 | line number
    names: list[str] = []
    for path in log_files(folder):
        names.append(path.name)
        try:
            stat, handle = _stat(path), path.open("rb")
        except OSError as exc:
            files[path.name] = {"stat": None, "error": f"file: cannot be read: {exc.strerror or exc}", "days": {}}
            continue
        own: dict[str, list[str]] = {}
        file_spans, leading, previous = _Spans(path.name, spans), [], None
        with handle:
            for number, start, end, raw in _lines(handle, 0, stat[0], 1):
                if isinstance(raw, bytes) and not raw.strip():
                    continue
                entry = _entry(raw, _default_id(path.name, number))
                if isinstance(entry, str):
                    if previous is None:
                        leading.append((number, start, end))
                    else:
                        file_spans.add(previous, number, start, end)
                    continue
                day = entry.day.isoformat()
                if entry.query_id in seen:
                    duplicates.setdefault(day, {})[f"{path.name}\0{number}"] = (
                        f"query_id: duplicate of {names[seen[entry.query_id] >> 32]} line "
                        f"{seen[entry.query_id] & 0xFFFFFFFF} (the first is kept)")
                else:
                    seen[entry.query_id] = len(names) - 1 << 32 | number  # an int: a string each would double it
                    ids.setdefault(day, []).append(entry.query_id)
                    own.setdefault(day, []).append(entry.query_id)
                    previous = day
                for line in leading:
                    file_spans.add(day, *line)
                leading = []
                file_spans.add(day, number, start, end)
        for line in leading:  # no valid line at all: reported on every day
            file_spans.add(None, *line)
        files[path.name] = {"stat": stat, "days": {day: _digest(found) for day, found in own.items()}}
    return {"version": INDEX_VERSION, "files": files, "undated": spans.pop(None, []),
            "days": {day: {"digest": _digest(ids.get(day, [])), "spans": found, "duplicates": duplicates.get(day, {})}
                     for day, found in sorted(spans.items())}}


def _digest(ids: list[str]) -> str:
    return sha256_hex("\n".join(sorted(ids)))[:16]


def _current(index: dict, folder: Path) -> bool:
    """The index still describes the folder: the same files, none changed since."""
    try:
        return index.get("version") == INDEX_VERSION and sorted(index["files"]) == [p.name for p in log_files(folder)] \
            and all(entry["stat"] == _stat(folder / name) for name, entry in index["files"].items())
    except OSError:
        return False


def log_index(folder: str | Path) -> dict:
    """The day index of ``folder``, kept in ``<folder>/.rag-assets-index.json`` and built again whenever a log
    file is added, removed or changed; where the folder cannot be written, it is built for this call only."""
    folder = Path(folder)
    path = folder / INDEX_NAME
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
        if _current(index, folder):
            return index
    except (OSError, ValueError):
        pass
    index = build_index(folder)
    temporary = path.with_name(f"{INDEX_NAME}.{os.getpid()}")
    try:
        temporary.write_text(json.dumps(index), encoding="utf-8")
        os.replace(temporary, path)  # two processes indexing at once: the last complete file wins
    except OSError:
        temporary.unlink(missing_ok=True)
    return index


def read_logs(folder: str | Path, day: date | None = None) -> LogRead:
    """Read the log files of ``folder``; only ``day``'s byte ranges when given (see :func:`log_index`).

    Never raises for bad content: invalid lines and repeated query ids are reported in ``bad_lines``, a
    bad line on the day of its nearest valid neighbour (a file with no valid line on every day), a
    repeated id on its own day with the first line kept. Records of other days are not read at all.
    """
    folder = Path(folder)
    index = log_index(folder)
    wanted = [day.isoformat()] if day is not None else list(index["days"])
    spans = [(span, name) for name in wanted for span in index["days"].get(name, {}).get("spans", ())]
    spans += [(span, None) for span in index["undated"]]
    order = {name: i for i, name in enumerate(index["files"])}
    records: list[ProductionQuery] = []
    bad = [BadLine(name, 0, entry["error"]) for name, entry in index["files"].items() if entry.get("error")]
    for (name, start, end, number), on in sorted(spans, key=lambda item: (order[item[0][0]], item[0][1])):
        duplicates = index["days"][on]["duplicates"] if on else {}
        try:
            handle = (folder / name).open("rb")
        except OSError as exc:
            bad.append(BadLine(name, 0, f"file: cannot be read: {exc.strerror or exc}"))
            continue
        with handle:
            for line, _, _, raw in _lines(handle, start, end, number):
                if isinstance(raw, bytes) and not raw.strip():
                    continue
                entry = _entry(raw, _default_id(name, line))
                if isinstance(entry, str):
                    bad.append(BadLine(name, line, entry, date.fromisoformat(on) if on else None))
                elif f"{name}\0{line}" in duplicates:
                    bad.append(BadLine(name, line, duplicates[f"{name}\0{line}"], entry.day))
                else:
                    records.append(entry)
    return LogRead(records, bad)


def logged_days(folder: str | Path) -> dict[str, str]:
    """Per logged day of ``folder``, the digest of its records (ids): the production_sample partition's data
    version, and what the CLI and the log sensor compare to tell whether a day needs scoring again."""
    return {day: entry["digest"] for day, entry in log_index(folder)["days"].items() if entry["digest"] != _digest([])}


def file_days(folder: str | Path) -> dict[str, dict[str, str]]:
    """Per log file of ``folder``, its own digest per day, so appending to one file re-requests only its days."""
    return {name: entry["days"] for name, entry in log_index(folder)["files"].items()}


def log_files(folder: str | Path) -> list[Path]:
    """The log files of ``folder``, by name."""
    return sorted(Path(folder).glob("*.jsonl"))


def day_digests(records: list[ProductionQuery]) -> dict[str, str]:
    """Per day, a digest of that day's records (their ids): the production_sample partition's data
    version, and what the log sensor compares to decide whether a day needs scoring again."""
    ids: dict[str, set[str]] = {}
    for record in records:
        ids.setdefault(record.day.isoformat(), set()).add(record.query_id)
    return {day: sha256_hex("\n".join(sorted(found)))[:16] for day, found in ids.items()}
