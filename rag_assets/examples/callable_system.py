"""A runnable example of plugging in your own RAG system as a Python callable.

Point the ``rag`` resource at it with ``kind="callable", target="rag_assets.examples.callable_system:answer"``.
Your function receives one request dict and returns one response dict (the contract is in
``rag_assets.rag.adapters``). This one ranks the snapshot's chunks by shared words with the question
and answers with the best chunk's first sentence; a real system calls its own retriever and model.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.settings import current_settings
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from rag_assets.text.tokens import content_words, sentences


@cache
def _chunks(corpus_version: str) -> tuple[SnapshotChunk, ...]:
    return tuple(SqlCorpusRepository(get_engine(current_settings().store_url)).snapshot_chunks(corpus_version))


def answer(request: dict[str, Any]) -> dict[str, Any]:
    wanted = set(content_words(request["question"]))
    ranked = sorted(_chunks(request["corpus_version"]),
                    key=lambda c: (-len(wanted & set(content_words(c.text))), c.chunk_id))[: request["k"]]
    best = ranked[0] if ranked else None
    first = next(iter(sentences(best.text)), None) if best else None
    return {
        "answer": f"{first} [{best.chunk_id}]" if first else "",
        "declined": not first,
        "retrieved": [{"chunk_id": c.chunk_id, "score": float(len(wanted & set(content_words(c.text))))} for c in ranked],
        "citations": [{"claim": first, "chunk_id": best.chunk_id}] if first else [],
    }
