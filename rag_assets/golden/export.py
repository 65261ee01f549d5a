"""Write a golden-set version as files a user can keep in git: JSONL, and the ragas test-set format."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from rag_assets.golden.importers import write_ragas_testset
from rag_assets.golden.models import GoldenItem


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temp, path)


def export_golden(items: Sequence[GoldenItem], number: int, folder: Path,
                  chunk_texts: Mapping[str, str]) -> tuple[Path, Path]:
    """``golden-v{number}.jsonl`` (our format) and ``golden-v{number}.ragas.jsonl``; returns both paths."""
    ours = folder / f"golden-v{number}.jsonl"
    lines = [json.dumps({
        "item_id": i.item_id, "revision": i.revision, "question_type": i.question_type, "question": i.question,
        "reference_answer": i.reference_answer, "corpus_version": i.corpus_version, "origin": i.origin,
        "relevant_chunks": [{"chunk_id": r.chunk_id, "content_hash": r.content_hash} for r in i.relevant_chunks],
    }, ensure_ascii=False, sort_keys=True) for i in items]
    _write_atomic(ours, "".join(line + "\n" for line in lines))
    ragas = folder / f"golden-v{number}.ragas.jsonl"
    write_ragas_testset([{
        "item_id": i.item_id, "question": i.question, "reference_answer": i.reference_answer,
        "question_type": i.question_type, "relevant_chunk_ids": [r.chunk_id for r in i.relevant_chunks],
        "reference_contexts": [chunk_texts[r.chunk_id] for r in i.relevant_chunks if r.chunk_id in chunk_texts],
    } for i in items], ragas)
    return ours, ragas
