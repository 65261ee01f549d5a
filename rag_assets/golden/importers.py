"""Import golden sets made elsewhere and pin them to a corpus snapshot.

Two external formats are read: the anthropic_docs evaluation set (a JSON list of pre-chunked
documents plus a JSON list of questions naming their chunks by link) and the ragas test set
(CSV or JSONL with ``user_input``, ``reference``, ``reference_contexts``). Both become
``ExternalItem`` objects carrying the *texts* of their relevant chunks, because external chunk
ids mean nothing to a snapshot: ``rag_assets.golden.pinning`` locates those texts in the corpus
revision as evidence spans (the locator the RAG run uses for a system's own contexts too).

``json_chunks_to_corpus`` turns a pre-chunked JSON corpus into a folder of Markdown files the
snapshot reads like any other corpus.

Domain code: no Dagster, no SQL. Every error names the file, the item (index and id) or row, and
the field, because these messages travel unchanged into failed runs.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from rag_assets.corpus.models import sha256_hex
from rag_assets.text.excerpt import excerpt
from rag_assets.errors import RagAssetsError
from rag_assets.files import replaced_in_one_step
from rag_assets.golden.models import ExternalItem
from rag_assets.text.control import control_character_problem
from rag_assets.text.spreadsheet import formula_cell, formula_message, restore, write_spreadsheet_csv

__all__ = [
    "ExternalDataError",
    "RAGAS_COLUMNS",
    "RAGAS_SUFFIXES",
    "content_id",
    "flat",
    "json_chunks_to_corpus",
    "question_type_from_synthesizer",
    "read_anthropic_docs_dataset",
    "ragas_items",
    "read_ragas_testset",
    "restored",
    "synthesizer_for_question_type",
    "write_ragas_testset",
]


class ExternalDataError(RagAssetsError, ValueError):
    """An external corpus or golden set cannot be read; the message names file, item/row and field."""


# --------------------------------------------------------------------------------------------
# Pre-chunked JSON corpus -> Markdown corpus folder
# --------------------------------------------------------------------------------------------

_SLUG_CHARS = re.compile(r"[^a-z0-9]+")
_SLUG_MAX = 80


def _load_json(path: Path) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ExternalDataError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExternalDataError(f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc


def _label(index: int, item: Any, id_field: str) -> str:
    """'item 3 (id 'abc')' when the item has a usable id, else 'item 3'."""
    if isinstance(item, Mapping):
        value = item.get(id_field)
        if isinstance(value, (str, int)) and str(value).strip():
            return f"item {index} ({id_field} {str(value)!r})"
    return f"item {index}"


def _text(value: str, where: str, what: str) -> str:
    """``value`` unless it holds a control character or an unpaired surrogate (the one rule of
    :mod:`rag_assets.text.control`: the store could not hold it)."""
    problem = control_character_problem(value)
    if problem:
        raise ExternalDataError(f"{where}: {what} {problem}")
    return value


def _require_str(path: Path, label: str, item: Mapping, field: str, *, allow_empty: bool = False) -> str:
    if field not in item:
        raise ExternalDataError(f"{path}: {label}: missing field '{field}'")
    value = item[field]
    if not isinstance(value, str):
        raise ExternalDataError(f"{path}: {label}: field '{field}' must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ExternalDataError(f"{path}: {label}: field '{field}' is empty")
    return _text(value, f"{path}: {label}", f"field '{field}'")


def _require_list(path: Path, data: Any, what: str) -> list:
    if not isinstance(data, list):
        raise ExternalDataError(f"{path}: expected a JSON list of {what}, got {type(data).__name__}")
    return data


def _read_json_chunks(chunks_json: Path) -> list[tuple[str, str, str]]:
    """(chunk_link, chunk_heading, text) of every chunk, validated, links unique."""
    data = _require_list(chunks_json, _load_json(chunks_json), "chunks")
    out: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(data):
        label = _label(index, item, "chunk_link")
        if not isinstance(item, Mapping):
            raise ExternalDataError(f"{chunks_json}: {label}: expected an object, got {type(item).__name__}")
        link = _require_str(chunks_json, label, item, "chunk_link")
        heading = _require_str(chunks_json, label, item, "chunk_heading", allow_empty=True)
        text = _require_str(chunks_json, label, item, "text")
        if link in seen:
            raise ExternalDataError(
                f"{chunks_json}: {label}: field 'chunk_link' repeats the link of item {seen[link]}")
        seen[link] = index
        out.append((link, heading, text))
    return out


def chunk_file_name(chunk_link: str) -> str:
    """A stable, filesystem-safe Markdown file name for an external chunk id.

    A readable slug of the link's path and fragment (the host is dropped: it is the same for a
    whole corpus) plus a short hash of the full link, which keeps names unique.
    """
    parts = urlsplit(chunk_link)
    readable = f"{parts.path}-{parts.fragment}" if parts.scheme or parts.netloc else chunk_link
    slug = _SLUG_CHARS.sub("-", readable.lower()).strip("-")[:_SLUG_MAX].rstrip("-") or "chunk"
    return f"{slug}-{sha256_hex(chunk_link)[:10]}.md"


def _markdown(link: str, heading: str, text: str) -> str:
    front: dict[str, str] = {}
    if heading.strip():
        front["title"] = heading.strip()
    front["source"] = link
    dumped = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, default_flow_style=False, width=1 << 30)
    body = text if text.endswith("\n") else text + "\n"
    return f"---\n{dumped}---\n{body}"


def json_chunks_to_corpus(chunks_json: Path, out_dir: Path) -> dict[str, str]:
    """Write one Markdown file per chunk of ``chunks_json`` into ``out_dir``; return link -> file.

    ``chunks_json`` is a JSON list of ``{chunk_link, chunk_heading, text}``. Each file has YAML
    front matter (``title`` = the heading, ``source`` = the link) and the text as its body. Names
    come from :func:`chunk_file_name`, so the same input always gives the same files; a file that
    already holds the right bytes is left untouched (its mtime too, so a re-snapshot reads
    nothing). Files in ``out_dir`` that this input does not produce are left alone: use a folder
    of its own.
    """
    chunks = _read_json_chunks(Path(chunks_json))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mapping: dict[str, str] = {}
    for link, heading, text in chunks:
        name = chunk_file_name(link)
        data = _markdown(link, heading, text).encode("utf-8")
        target = out / name
        try:
            unchanged = target.read_bytes() == data
        except OSError:
            unchanged = False
        if not unchanged:
            target.write_bytes(data)
        mapping[link] = name
    return mapping


# --------------------------------------------------------------------------------------------
# anthropic_docs evaluation set
# --------------------------------------------------------------------------------------------

def read_anthropic_docs_dataset(dataset_json: Path, chunks_json: Path) -> list[ExternalItem]:
    """Read ``docs_evaluation_dataset.json`` with the texts of its chunks from ``anthropic_docs.json``.

    Items are ``{id, question, correct_chunks, correct_answer}``; ``correct_chunks`` are
    ``chunk_link`` values of ``chunks_json``. Every item becomes a factual ``ExternalItem``.
    """
    dataset_json, chunks_json = Path(dataset_json), Path(chunks_json)
    texts = {link: text for link, _heading, text in _read_json_chunks(chunks_json)}
    data = _require_list(dataset_json, _load_json(dataset_json), "items")
    items: list[ExternalItem] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(data):
        label = _label(index, item, "id")
        if not isinstance(item, Mapping):
            raise ExternalDataError(f"{dataset_json}: {label}: expected an object, got {type(item).__name__}")
        if "id" not in item:
            raise ExternalDataError(f"{dataset_json}: {label}: missing field 'id'")
        if not isinstance(item["id"], (str, int)) or isinstance(item["id"], bool) or not str(item["id"]).strip():
            raise ExternalDataError(f"{dataset_json}: {label}: field 'id' must be a non-empty string")
        item_id = str(item["id"])
        if item_id in seen:
            raise ExternalDataError(f"{dataset_json}: {label}: field 'id' repeats the id of item {seen[item_id]}")
        seen[item_id] = index
        question = _require_str(dataset_json, label, item, "question")
        answer = _require_str(dataset_json, label, item, "correct_answer")
        if "correct_chunks" not in item:
            raise ExternalDataError(f"{dataset_json}: {label}: missing field 'correct_chunks'")
        links = item["correct_chunks"]
        if not isinstance(links, list) or not links or not all(isinstance(x, str) and x for x in links):
            raise ExternalDataError(
                f"{dataset_json}: {label}: field 'correct_chunks' must be a non-empty list of chunk links")
        links = list(dict.fromkeys(links))
        for link in links:
            if link not in texts:
                raise ExternalDataError(
                    f"{dataset_json}: {label}: field 'correct_chunks' names chunk {link!r}, "
                    f"which is not in {chunks_json}")
        items.append(ExternalItem(
            external_id=item_id,
            question=question.strip(),
            reference_answer=answer.strip(),
            question_type="factual",
            relevant_texts=tuple(texts[link] for link in links),
            external_chunk_ids=tuple(links),
            relevant_sources=tuple(chunk_file_name(link) for link in links),
            location=label,
            texts_field="correct_chunks",
        ))
    return items


# --------------------------------------------------------------------------------------------
# ragas test sets (CSV or JSONL)
# --------------------------------------------------------------------------------------------


def flat(text: str) -> str:
    """``text`` with its whitespace collapsed: how two questions or references are compared, as a review file's
    edits are (a spreadsheet re-wraps lines and trims spaces, which changes nothing)."""
    return " ".join(text.split())


def _unnamed_clash(where: str, other_row: int, question: str, named_id: str) -> str:
    """Why a file is refused whose row without an id asks the question of its row with an id (``named_id``) with
    another reference: the unnamed row is never that item, so the file would hold two answers to one question."""
    return (f"{where}: field 'reference' differs from row {other_row}'s for the same user_input "
            f"({excerpt(question)}), the item with id {named_id!r}; keep one of the two rows or give this one an id")


def derived_id(question: str, reference: str) -> str:
    """The id of a ragas row without one (``content_id``): how the store tells the items imported without an id,
    the only ones a later row without an id may correct, from those the team named."""
    return content_id("ragas", question, reference)


def content_id(prefix: str, question: str, reference: str) -> str:
    """The id of an imported item that has none: a hash of its question and reference (whitespace
    normalised), never its row number, which a second file reuses for another question."""
    return f"{prefix}-{sha256_hex(chr(0).join((flat(question), flat(reference))))[:16]}"

RAGAS_COLUMNS = ("user_input", "reference_contexts", "reference", "synthesizer_name")
#: The file types a ragas test set is read from and written to.
RAGAS_SUFFIXES = (".csv", ".jsonl")
#: ``origin`` is where the item comes from (``generated``, ``generated:unreviewed``, ``imported:...``), where known.
EXTRA_COLUMNS = ("item_id", "question_type", "relevant_chunk_ids", "origin")
#: The columns of a ragas row the reader takes: in a CSV, none of them may be a formula cell.
_READ_COLUMNS = ("user_input", "reference", "reference_contexts", "id", "item_id", "question_type",
                 "synthesizer_name", "relevant_chunk_ids")

# What we write for our own types; read back through ``question_type_from_synthesizer`` (or the
# ``question_type`` extra column, which wins, so types ragas has no name for survive a round trip).
_SYNTHESIZERS = {
    "factual": "single_hop_specific_query_synthesizer",
    "multi_hop": "multi_hop_specific_query_synthesizer",
    "abstractive": "abstract_query_synthesizer",
}
#: The prefix of the synthesizer name we write for a type ragas has no synthesizer for.
_OWN_SYNTHESIZER = "rag_assets_"


def question_type_from_synthesizer(name: str | None) -> str:
    """Our question type for a ragas synthesizer name (``multi_hop_abstract_...`` is multi-hop), and for the names
    :func:`synthesizer_for_question_type` gives the types ragas has none for (``rag_assets_adversarial``): a file
    keeping only ragas' columns still says which items are adversarial, whose reference contexts are empty."""
    lowered = (name or "").lower()
    if lowered.startswith(_OWN_SYNTHESIZER) and lowered != _OWN_SYNTHESIZER:
        return lowered.removeprefix(_OWN_SYNTHESIZER)
    if "multi_hop" in lowered:
        return "multi_hop"
    if "single_hop" in lowered:
        return "factual"
    if "abstract" in lowered:
        return "abstractive"
    return "factual"


def synthesizer_for_question_type(question_type: str) -> str:
    return _SYNTHESIZERS.get(question_type, f"{_OWN_SYNTHESIZER}{question_type}")


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in RAGAS_SUFFIXES:
        raise ExternalDataError(f"{path}: unsupported ragas test-set format '{suffix or '(none)'}': use .csv or .jsonl")
    return suffix


def _parse_list(value: Any, where: str, field: str) -> list[str]:
    """A list of strings given as a list, or as a JSON or Python-literal list string (CSV)."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
                raise ExternalDataError(
                    f"{where}: field '{field}' is not a list (neither JSON nor a Python literal): {exc}") from exc
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise ExternalDataError(f"{where}: field '{field}' must be a list of strings, got {type(value).__name__}")
    for position, element in enumerate(value, start=1):
        if not isinstance(element, str):
            raise ExternalDataError(
                f"{where}: field '{field}' element {position} must be a string, got {type(element).__name__}")
        _text(element, where, f"field '{field}' element {position}")
    return value


@contextmanager
def _large_csv_fields() -> Iterator[None]:
    """Let the csv module read cells of any length (reference contexts can be whole documents)."""
    previous = csv.field_size_limit()
    csv.field_size_limit(max(previous, 2**31 - 1))
    try:
        yield
    finally:
        csv.field_size_limit(previous)


class _RecordLines:
    """A file's lines for the csv reader, noting the line its next record starts on: the first line that is not
    blank since the last ``start()`` (the reader skips blank lines between records, and a quoted cell may run over
    several lines, so a record's first line is neither its number nor the line after the previous one)."""

    def __init__(self, handle: Iterable[str]) -> None:
        self._lines = enumerate(handle, start=1)
        self._first: int | None = None

    def __iter__(self) -> _RecordLines:
        return self

    def __next__(self) -> str:
        number, line = next(self._lines)
        if self._first is None and line.strip("\r\n"):
            self._first = number
        return line

    def start(self) -> int | None:
        """The first line of the record read since the last call (None: none was)."""
        first, self._first = self._first, None
        return first


def _rows(path: Path, suffix: str) -> Iterable[tuple[int, Mapping[str, Any], int | None]]:
    """(row number from 1, row, the line of the file it starts on) of a CSV or JSONL file."""
    try:
        handle = path.open(encoding="utf-8-sig", newline="" if suffix == ".csv" else None)
    except OSError as exc:
        raise ExternalDataError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    with handle, _large_csv_fields():
        if suffix == ".csv":
            lines = _RecordLines(handle)
            reader = csv.DictReader(lines)
            if reader.fieldnames is None:
                return
            lines.start()  # the header's
            try:
                for number, row in enumerate(reader, start=1):
                    _refuse_formulas(row, f"{path}: row {number}")
                    yield number, restored(row), lines.start()
            except csv.Error as exc:
                raise ExternalDataError(f"{path}: line {reader.line_num}: not valid CSV: {exc}") from exc
            return
        number = 0
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            number += 1
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ExternalDataError(f"{path}: row {number} (line {line_number}): not valid JSON: {exc.msg}") from exc
            if not isinstance(row, Mapping):
                raise ExternalDataError(
                    f"{path}: row {number} (line {line_number}): expected a JSON object, got {type(row).__name__}")
            yield number, row, line_number


def _refuse_formulas(row: Mapping[str, Any], where: str) -> None:
    """Raise when a cell the reader takes starts like a formula, by the rule a review file is read with
    (:func:`~rag_assets.text.spreadsheet.formula_cell`): the team's spreadsheet would run it, and the text
    would be taken into the golden set as the question or reference."""
    for field in _READ_COLUMNS:
        raw = row.get(field)
        character = formula_cell(raw) if isinstance(raw, str) else None
        if character is not None:
            raise ExternalDataError(f"{where}: field '{field}' {formula_message(character)}")


def restored(row: Mapping[str, Any]) -> dict[str, Any]:
    """A CSV row with each cell as written before :func:`rag_assets.text.spreadsheet.neutralise`."""
    return {name: restore(value) if isinstance(value, str) else value for name, value in row.items()}


def _cell_str(row: Mapping[str, Any], field: str, where: str, *, required: bool, numbers: bool = False) -> str | None:
    """A text cell as written (not stripped, so a round trip keeps it); None when absent or blank. A number is
    taken (as its text) only where ``numbers`` says so, an id: ``"reference": 42`` is a mistake, not an answer."""
    value = row.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ExternalDataError(f"{where}: field '{field}' is missing or empty")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float) if numbers else str):
        raise ExternalDataError(f"{where}: field '{field}' must be a string, got {type(value).__name__}")
    return _text(value, where, f"field '{field}'") if isinstance(value, str) else str(value)


def read_ragas_testset(path: Path) -> list[ExternalItem]:
    """Read a ragas test set (``.csv`` or ``.jsonl``) into ``ExternalItem`` objects.

    Required columns: ``user_input``, ``reference``, ``reference_contexts`` (a list of strings, none of them blank;
    in CSV a JSON or Python-literal list; empty for an adversarial item, see ``pinning.refused_without_texts``).
    Optional: ``synthesizer_name`` (mapped onto our question types), ``id`` or ``item_id`` (else
    :func:`content_id` of question and reference, so the same item gets the same id in every file and two
    files never collide), and the extras this module writes,
    ``question_type`` (wins over the synthesizer name) and ``relevant_chunk_ids``.
    """
    path = Path(path)
    return ragas_items(_rows(path, _suffix(path)), str(path))


def ragas_items(rows: Iterable[tuple[int, Mapping[str, Any], int | None]], source: str) -> list[ExternalItem]:
    """Numbered ragas rows (from a file with the line each starts on, or a DataFrame's records with None) as
    items, by the rules of :func:`read_ragas_testset`; errors name ``source``, the row and the field."""
    items: list[ExternalItem] = []
    seen: dict[str, int] = {}
    asked: dict[str, tuple[int, str]] = {}  # question (flat) -> the first row without an id asking it, its reference
    named: dict[str, list[tuple[int, str, str]]] = {}  # question (flat) -> the rows with an id asking it: row, id, reference
    for number, row, line in rows:
        where = f"{source}: row {number}"
        question = _cell_str(row, "user_input", where, required=True)
        reference = _cell_str(row, "reference", where, required=True)
        if row.get("reference_contexts") is None:
            raise ExternalDataError(f"{where}: field 'reference_contexts' is missing")
        contexts = _parse_list(row["reference_contexts"], where, "reference_contexts")
        blank = next((n for n, context in enumerate(contexts, start=1) if not context.strip()), None)
        if blank is not None:  # evidence no retrieved text can ever hit: a label lost, not a question nothing answers
            raise ExternalDataError(f"{where}: field 'reference_contexts' element {blank} is empty (an item that "
                                    "nothing answers has no reference contexts: [])")
        given = (_cell_str(row, "id", where, required=False, numbers=True)
                 or _cell_str(row, "item_id", where, required=False, numbers=True) or "").strip()
        item_id = given or derived_id(question, reference)
        asking, answer = flat(question), flat(reference)
        if given:  # a row with an id is the item the team named, though another named row asks its question
            unnamed = asked.get(asking)
            if unnamed is not None and unnamed[1] != answer:
                raise ExternalDataError(_unnamed_clash(where, unnamed[0], asking, given))
            named.setdefault(asking, []).append((number, given, answer))
        else:
            first, earlier = asked.setdefault(asking, (number, answer))
            if earlier != answer:
                raise ExternalDataError(f"{where}: field 'reference' differs from row {first}'s for the same "
                                        f"user_input ({excerpt(asking)}); keep one of the two rows")
            clash = next(((row, name) for row, name, other in named.get(asking, ()) if other != answer), None)
            if clash is not None:
                raise ExternalDataError(_unnamed_clash(where, clash[0], asking, clash[1]))
        if item_id in seen:
            what = f"id {item_id!r} repeats the id" if given else "the same user_input and reference as"
            raise ExternalDataError(f"{where}: {what} of row {seen[item_id]}")
        seen[item_id] = number
        question_type = (_cell_str(row, "question_type", where, required=False)
                         or question_type_from_synthesizer(_cell_str(row, "synthesizer_name", where, required=False))
                         ).strip().lower()  # a team's "Adversarial" is the adversarial type, stored as such
        chunk_ids = row.get("relevant_chunk_ids")
        external_ids = _parse_list(chunk_ids, where, "relevant_chunk_ids") if chunk_ids is not None else []
        items.append(ExternalItem(
            external_id=item_id,
            question=question,
            reference_answer=reference,
            question_type=question_type,
            relevant_texts=tuple(contexts),
            external_chunk_ids=tuple(external_ids),
            location=f"row {number}" + (f" (line {line})" if line is not None else ""),
            derived_id=not given,
        ))
    return items


def _row_for_ragas(path: Path, index: int, row: Mapping[str, Any]) -> dict[str, Any]:
    where = f"{path}: row {index}"
    if not isinstance(row, Mapping):
        raise ExternalDataError(f"{where}: expected a mapping, got {type(row).__name__}")
    for field in ("item_id", "question", "reference_answer", "question_type"):
        value = row.get(field)
        if not isinstance(value, str) or not value.strip():
            raise ExternalDataError(f"{where}: field '{field}' must be a non-empty string")
    lists: dict[str, list[str]] = {}
    for field in ("relevant_chunk_ids", "reference_contexts"):
        value = row.get(field)
        if isinstance(value, tuple):
            value = list(value)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ExternalDataError(f"{where}: field '{field}' must be a list of strings")
        lists[field] = value
    return {
        "user_input": row["question"],
        "reference_contexts": lists["reference_contexts"],
        "reference": row["reference_answer"],
        "synthesizer_name": synthesizer_for_question_type(row["question_type"]),
        "item_id": row["item_id"],
        "question_type": row["question_type"],
        "relevant_chunk_ids": lists["relevant_chunk_ids"],
        **({"origin": row["origin"]} if row.get("origin") else {}),
    }


def write_ragas_testset(rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Write rows in the ragas test-set format (``.csv`` or ``.jsonl``), replacing ``path`` atomically.

    A row has ``item_id``, ``question``, ``reference_answer``, ``question_type``,
    ``relevant_chunk_ids`` (list) and ``reference_contexts`` (list of texts), and may have ``origin``. Columns
    are ragas' (``user_input``, ``reference_contexts``, ``reference``, ``synthesizer_name``) plus ``item_id``,
    ``question_type``, ``relevant_chunk_ids`` and ``origin``; in CSV the lists are JSON strings and formula cells are
    neutralised (:mod:`rag_assets.text.spreadsheet`).
    ``read_ragas_testset`` reads the file back to the same items.
    """
    path = Path(path)
    suffix = _suffix(path)
    records = [_row_for_ragas(path, index, row) for index, row in enumerate(rows, start=1)]
    with replaced_in_one_step(path, newline="" if suffix == ".csv" else None) as handle:
        if suffix == ".jsonl":
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            columns = [*RAGAS_COLUMNS, *EXTRA_COLUMNS]
            write_spreadsheet_csv(handle, columns, (
                [json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value
                 for value in map(record.get, columns)] for record in records))


