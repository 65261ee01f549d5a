"""A golden set given to ``rag_assets.evaluate``: a golden-set export, a ragas test set or a
DataFrame, pinned to the chunks the evaluation ranks.

With a corpus folder, the chunks and documents are that corpus's snapshot (``corpus.snapshot.read_chunks``,
the ids a stored snapshot has): items keep the chunk ids they name, and a ragas item without ids gets
its reference contexts located in the documents as evidence spans (``rag_assets.evidence.locate``), so
retrieval is counted at the granularity of its labels. Without a corpus, the documents are the
reference contexts themselves, one each, so retrieval metrics ask whether the system brought back the
text of those contexts (a system that names snapshot chunk ids needs the corpus). Either way an item
without reference contexts must be marked adversarial (``pinning.refused_without_texts``, the import
command's rule).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_assets.corpus.models import ChunkerConfig, ChunkRef, SnapshotChunk, sha256_hex
from rag_assets.corpus.snapshot import read_chunks
from rag_assets.evidence.documents import Documents
from rag_assets.golden.export import read_golden_records
from rag_assets.golden.importers import ExternalDataError, ragas_items, read_ragas_testset
from rag_assets.golden.models import ExternalItem, GoldenItem
from rag_assets.golden.pinning import pin_external_items, refused_without_texts

#: The corpus version of an evaluation whose chunks are the golden set's reference contexts (and their hash).
CONTEXTS_VERSION = "reference-contexts"
#: DataFrame columns of older ragas releases, read as today's names.
RAGAS_ALIASES = {"question": "user_input", "ground_truth": "reference"}
SHOWN = 5


@dataclass(frozen=True)
class GoldenSource:
    """Golden items, and the chunks and documents (one corpus version) their evidence and a system's
    contexts are found in."""

    items: list[GoldenItem]
    chunks: list[SnapshotChunk]
    corpus_version: str
    corpus_root: Path | None
    documents: Documents


def _cell(value: Any) -> Any:
    """A DataFrame cell as the ragas reader takes it: arrays as lists, NaN as absent."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    return None if isinstance(value, float) and math.isnan(value) else value


def frame_rows(frame: Any) -> Iterator[tuple[int, Mapping[str, Any], None]]:
    """A pandas DataFrame's rows numbered from 1, under ragas' column names (no line of a file)."""
    renamed = {old: new for old, new in RAGAS_ALIASES.items() if old in frame.columns and new not in frame.columns}
    for number, record in enumerate(frame.rename(columns=renamed).to_dict("records"), start=1):
        yield number, {str(k): _cell(v) for k, v in record.items()}, None


def _is_ours(path: Path) -> bool:
    """Our exports name ``relevant_chunks`` (a JSONL record's field, a CSV or parquet column); a ragas
    file has ``user_input``."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return True  # ragas test sets are JSONL or CSV; a parquet file here is one of our exports
    if suffix not in (".jsonl", ".csv"):
        return False
    try:
        with path.open(encoding="utf-8-sig") as handle:
            first = next((line for line in handle if line.strip()), "")
    except OSError as exc:
        raise ExternalDataError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    if suffix == ".csv":
        columns = set(next(csv.reader([first]), []))
        return "relevant_chunks" in columns and "user_input" not in columns
    try:
        record = json.loads(first) if first else {}
    except json.JSONDecodeError:
        return False  # the ragas reader names the line
    return isinstance(record, dict) and "relevant_chunks" in record and "user_input" not in record


def read_golden(golden: Any) -> list[GoldenItem] | list[ExternalItem]:
    """Items of a golden-set export (JSONL, CSV, parquet), a ragas test set (.csv / .jsonl) or a DataFrame."""
    if isinstance(golden, (str, Path)):
        path = Path(golden)
        return read_golden_records(path) if _is_ours(path) else read_ragas_testset(path)
    if hasattr(golden, "to_dict") and hasattr(golden, "columns"):
        return ragas_items(frame_rows(golden), "DataFrame")
    raise ExternalDataError(f"a golden set is a file path or a pandas DataFrame, got {type(golden).__name__}")


def _context_chunks(items: Sequence[ExternalItem]) -> tuple[list[SnapshotChunk], list[tuple[ChunkRef, ...]]]:
    """The distinct reference contexts as chunks (under the file's chunk ids when it gives one per
    context, else a hash of the text), and each item's refs to them."""
    chunks: dict[str, SnapshotChunk] = {}
    refs = []
    for item in items:
        texts = item.relevant_texts
        ids = item.external_chunk_ids if len(item.external_chunk_ids) == len(texts) else ()
        mine = []
        for n, text in enumerate(texts):
            chunk_id = ids[n] if ids else f"ctx-{sha256_hex(text)[:16]}"
            known = chunks.setdefault(chunk_id, SnapshotChunk(chunk_id, sha256_hex(text), chunk_id, chunk_id, None, None,
                                                              "", text, 0, len(text)))
            if known.text != text:
                raise ExternalDataError(f"item {item.external_id}: chunk id {chunk_id!r} names two different texts")
            mine.append(known.ref)
        refs.append(tuple(dict.fromkeys(mine)))
    return list(chunks.values()), refs


def _shown(problems: Sequence[str]) -> str:
    more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return "; ".join(problems[:SHOWN]) + more


def _refuse_unpinned(left: Sequence[tuple[ExternalItem, str]], where: str) -> None:
    """Raise naming the first items that cannot be pinned to ``where``, each by its id and row (line), as the import
    command names them, with why."""
    if left:
        raise ExternalDataError(f"{len(left)} item{'s' if len(left) > 1 else ''} cannot be pinned to {where}: "
                                + _shown([f"{item.external_id}: {item.location}: {why}" if item.location
                                          else f"{item.external_id}: {why}" for item, why in left]))


def _corpus_items(items: Sequence[ExternalItem], chunks: Sequence[SnapshotChunk], documents: Documents,
                  root: Path, version: str) -> list[GoldenItem]:
    """Items naming snapshot chunk ids the corpus has keep them; the others are pinned by their
    reference contexts, located as evidence spans (``pin_external_items``: an item whose texts are found nowhere
    is an error, so is one without any unless its file says it is adversarial, which has no evidence)."""
    by_id = {c.chunk_id: c for c in chunks}
    named = {i.external_id for i in items if i.external_chunk_ids and all(c in by_id for c in i.external_chunk_ids)}
    pinned, left = pin_external_items([i for i in items if i.external_id not in named], documents, chunks)
    _refuse_unpinned(left, f"the corpus at {root}")
    found = {p.item.external_id: p for p in pinned}
    out = []
    for i in items:
        if i.external_id in named:
            refs, spans = tuple(by_id[c].ref for c in i.external_chunk_ids), ()
        else:
            refs, spans = found[i.external_id].refs, found[i.external_id].evidence
        out.append(GoldenItem(i.external_id, 1, i.question_type, i.question, i.reference_answer, refs, version,
                              "imported", evidence=spans))
    return out


def _pinned_ours(items: Sequence[GoldenItem], chunks: Sequence[SnapshotChunk], root: Path,
                 version: str) -> list[GoldenItem]:
    known = {c.chunk_id for c in chunks}
    missing = [f"{i.item_id}: {r.chunk_id}" for i in items for r in i.relevant_chunks if r.chunk_id not in known]
    if missing:
        raise ExternalDataError(f"{len(missing)} relevant chunks are not in the corpus at {root} (was the golden set "
                                f"made from another corpus version?): {_shown(missing)}")
    return [GoldenItem(i.item_id, i.revision, i.question_type, i.question, i.reference_answer, i.relevant_chunks,
                       version, i.origin, evidence=i.evidence) for i in items]


def golden_source(golden: Any, corpus: str | Path | None = None, chunker: ChunkerConfig | None = None) -> GoldenSource:
    """The golden items of ``golden`` pinned to ``corpus`` (a folder), or to their own reference contexts."""
    loaded = read_golden(golden)
    root = Path(corpus).expanduser().absolute() if corpus is not None else None
    ours = bool(loaded) and isinstance(loaded[0], GoldenItem)
    if root is None:
        if ours:
            raise ExternalDataError("a golden-set export names its chunks by snapshot id: pass corpus= (the corpus "
                                    "folder it was made from), or evaluate its ragas export (golden-v<N>.ragas.jsonl)")
        _refuse_unpinned([(i, why) for i in loaded if (why := refused_without_texts(i)) is not None],
                         "their reference contexts")
        chunks, refs = _context_chunks(loaded)
        version = f"{CONTEXTS_VERSION}-{sha256_hex(chr(0).join(c.content_hash for c in chunks))[:12]}"
        items = [GoldenItem(i.external_id, 1, i.question_type, i.question, i.reference_answer, r, version, "imported")
                 for i, r in zip(loaded, refs)]
        return GoldenSource(items, chunks, version, root, Documents.of({c.path: c.text for c in chunks}))
    version, chunks, bodies = read_chunks(root, chunker or ChunkerConfig())
    documents = Documents.of(bodies, {c.path: c.doc_version for c in chunks})
    if ours:
        return GoldenSource(_pinned_ours(loaded, chunks, root, version), chunks, version, root, documents)
    return GoldenSource(_corpus_items(loaded, chunks, documents, root, version), chunks, version, root, documents)
