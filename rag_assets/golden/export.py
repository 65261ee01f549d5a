"""Write a golden-set version as files a user can keep in git or load elsewhere.

Formats: ``jsonl`` (ours, one item per line), ``ragas`` (the ragas test-set JSONL), ``csv`` (ours,
flat, the chunk list as JSON in its cell) and ``parquet`` (ours, for pandas/Arrow users; needs the
``parquet`` extra). The CSVs are opened in spreadsheets: their formula cells are neutralised and read
back as written (:mod:`rag_assets.text.spreadsheet`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from rag_assets.corpus.models import ChunkRef
from rag_assets.errors import ConfigError
from rag_assets.evidence.spans import EvidenceSpan
from rag_assets.files import replaced_in_one_step
from rag_assets.golden.importers import ExternalDataError, restored, write_ragas_testset
from rag_assets.golden.models import GoldenItem
from rag_assets.text.spreadsheet import write_spreadsheet_csv

FORMATS = {"jsonl": ".jsonl", "ragas": ".ragas.jsonl", "csv": ".csv", "parquet": ".parquet"}
GOLDEN_COLUMNS = ("item_id", "revision", "question_type", "question", "reference_answer", "corpus_version", "origin",
                  "relevant_chunks", "evidence")


def _write_atomic(path: Path, text: str) -> None:
    with replaced_in_one_step(path, newline="") as out:
        out.write(text)


def golden_records(items: Sequence[GoldenItem]) -> list[dict]:
    """Our format: one record per item, its relevant chunks with the content hash it was pinned to and its
    own evidence spans (empty for an item whose evidence is its chunks')."""
    return [{
        "item_id": i.item_id, "revision": i.revision, "question_type": i.question_type, "question": i.question,
        "reference_answer": i.reference_answer, "corpus_version": i.corpus_version, "origin": i.origin,
        "relevant_chunks": [{"chunk_id": r.chunk_id, "content_hash": r.content_hash} for r in i.relevant_chunks],
        "evidence": [e.to_json() for e in i.evidence],
    } for i in items]


def _listed(record: Mapping, field: str, required: bool = False) -> list:
    """A list field: as is (JSONL), or JSON in its cell (CSV, parquet); an optional one (``evidence``) is
    absent from files written before it."""
    if required and field not in record:
        raise KeyError(field)
    value = record.get(field) or []
    try:
        return json.loads(value) if isinstance(value, str) else list(value)
    except json.JSONDecodeError as exc:
        raise ExternalDataError(f"{field}: not valid JSON: {exc.msg}") from exc


def _records(path: Path) -> Iterator[tuple[str, Mapping]]:
    """(where, record) for each item of one of our files: JSONL by line, CSV or parquet by row (from 1)."""
    if path.suffix.lower() == ".csv":
        try:
            with path.open(encoding="utf-8-sig", newline="") as handle:
                reader = csv.DictReader(handle, strict=True)
                try:
                    rows = list(reader)
                except csv.Error as exc:
                    raise ExternalDataError(f"{path}: line {reader.line_num}: not valid CSV: {exc}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ExternalDataError(f"{path}: cannot be read: {exc}") from exc
        for number, record in enumerate(rows, start=1):
            yield f"{path}: row {number}", restored(record)
        return
    if path.suffix.lower() == ".parquet":
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise ConfigError("reading parquet needs pyarrow: pip install 'rag_assets[parquet]'") from exc
        except (OSError, ValueError) as exc:
            raise ExternalDataError(f"{path}: cannot be read: {exc}") from exc
        for number, record in enumerate(frame.to_dict("records"), start=1):
            yield f"{path}: row {number}", record
        return
    try:
        # on "\n" only: JSON strings may hold U+2028 and friends, which str.splitlines splits on
        lines = path.read_text(encoding="utf-8-sig").split("\n")
    except OSError as exc:
        raise ExternalDataError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield f"{path}: line {number}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise ExternalDataError(f"{path}: line {number}: not valid JSON: {exc.msg}") from exc


def read_golden_records(path: Path) -> list[GoldenItem]:
    """Items from a file in one of our formats (JSONL, or CSV/parquet with the chunk list as JSON in its
    cell, as :func:`write_golden` writes them); an ExternalDataError names the file, the line or row and
    the field that is wrong."""
    items = []
    for where, record in _records(Path(path)):
        try:
            chunks = tuple(ChunkRef(str(r["chunk_id"]), str(r["content_hash"]))
                           for r in _listed(record, "relevant_chunks", required=True))
            evidence = tuple(EvidenceSpan.from_json(e) for e in _listed(record, "evidence"))
            items.append(GoldenItem(str(record["item_id"]), int(record["revision"]), str(record["question_type"]),
                                    str(record["question"]), str(record["reference_answer"]), chunks,
                                    str(record["corpus_version"]), str(record.get("origin") or "generated"),
                                    evidence=evidence))
        except ExternalDataError as exc:
            raise ExternalDataError(f"{where}: {exc}") from exc
        except KeyError as exc:
            raise ExternalDataError(f"{where}: missing field {exc.args[0]!r}") from exc
        except (TypeError, ValueError, OverflowError) as exc:
            raise ExternalDataError(f"{where}: not a golden item ({exc})") from exc
    return items


def _reference_contexts(item: GoldenItem, chunk_texts: Mapping[str, str],
                        evidence_texts: Mapping[EvidenceSpan, str]) -> list[str]:
    """The texts that answer an item: its evidence spans' (an imported item's labels), else its chunks'."""
    if item.evidence:
        return [evidence_texts[e] for e in item.evidence if e in evidence_texts]
    return [chunk_texts[r.chunk_id] for r in item.relevant_chunks if r.chunk_id in chunk_texts]


def write_golden(items: Sequence[GoldenItem], path: Path, file_format: str, chunk_texts: Mapping[str, str],
                 evidence_texts: Mapping[EvidenceSpan, str] | None = None) -> Path:
    """Write ``items`` to ``path`` in ``file_format`` (one of FORMATS), replacing it atomically. The ragas
    format needs the texts: ``chunk_texts`` by chunk id, ``evidence_texts`` by evidence span."""
    if file_format == "ragas":
        write_ragas_testset([{
            "item_id": i.item_id, "question": i.question, "reference_answer": i.reference_answer,
            "question_type": i.question_type, "relevant_chunk_ids": [r.chunk_id for r in i.relevant_chunks],
            "reference_contexts": _reference_contexts(i, chunk_texts, evidence_texts or {}), "origin": i.origin,
        } for i in items], path)
        return path
    records = golden_records(items)
    if file_format == "jsonl":
        _write_atomic(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
        return path
    if file_format not in FORMATS:
        raise ConfigError(f"export format must be one of {', '.join(FORMATS)}, got {file_format!r}")
    flat = [{**r, "relevant_chunks": json.dumps(r["relevant_chunks"]), "evidence": json.dumps(r["evidence"])}
            for r in records]
    if file_format == "csv":
        out = io.StringIO()
        write_spreadsheet_csv(out, GOLDEN_COLUMNS, ([r[name] for name in GOLDEN_COLUMNS] for r in flat))
        _write_atomic(path, out.getvalue())
        return path
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    try:
        pd.DataFrame(flat).to_parquet(temp, index=False)
    except ImportError as exc:
        raise ConfigError("parquet export needs pyarrow: pip install 'rag_assets[parquet]'") from exc
    os.replace(temp, path)
    return path


def export_golden(items: Sequence[GoldenItem], number: int, folder: Path, chunk_texts: Mapping[str, str],
                  evidence_texts: Mapping[EvidenceSpan, str]) -> tuple[Path, Path]:
    """``golden-v{number}.jsonl`` (our format) and ``golden-v{number}.ragas.jsonl``; returns both paths."""
    return tuple(write_golden(items, folder / f"golden-v{number}{FORMATS[kind]}", kind, chunk_texts, evidence_texts)
                 for kind in ("jsonl", "ragas"))
