"""The RAG-system interface, and running one over a golden set with every failure recorded per item."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from rag_assets.corpus.models import SnapshotChunk, sha256_hex
from rag_assets.errors import ConfigError
from rag_assets.evidence.locate import Location
from rag_assets.evidence.spans import Span
from rag_assets.golden.models import GoldenItem
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagQuery, RagResponse, RetrievedChunk


class RagSystem(Protocol):
    """Anything that answers questions over the pinned corpus: reference, callable or HTTP."""

    name: str

    def config(self) -> dict[str, Any]:
        """What identifies this system's behaviour (never secrets): its hash is recorded per run."""

    def answer(self, queries: Sequence[RagQuery], progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
        """One response per query, in order; a failure is a response with ``error`` set. ``progress(done,
        total)``, when given, is told of answered queries as they come."""


FRAMEWORKS = ("langchain", "llamaindex")


def framework_system(kind: str, target: str, corpus_root: Path | None, *, input_key: str | None = "input", k: int = 5,
                     timeout: float = 30.0, max_concurrency: int = 4) -> RagSystem:
    """A LangChain chain or LlamaIndex query engine named ``module:attribute`` (the object, or a
    function that builds it). Imported only when asked for, so the extras stay optional."""
    if kind == "langchain":
        from rag_assets.rag.langchain_system import LangChainRagSystem, load_chain

        return LangChainRagSystem(load_chain(target), target, corpus_root, input_key, k, timeout, max_concurrency)
    if kind == "llamaindex":
        from rag_assets.rag.llamaindex_system import LlamaIndexRagSystem, load_engine

        return LlamaIndexRagSystem(load_engine(target), target, corpus_root, k, timeout, max_concurrency)
    raise ConfigError(f"a framework RAG system is one of {', '.join(FRAMEWORKS)}, got {kind!r}")


def config_hash(system: RagSystem) -> str:
    return sha256_hex(json.dumps({"name": system.name, **system.config()}, sort_keys=True, default=str))[:16]


def _check_chunks(response: RagResponse, chunks: Mapping[str, SnapshotChunk],
                  located: Mapping[tuple[str, str | None], Location | None], corpus_version: str) -> RagResponse:
    """Fill the snapshot's text and span into named chunks and the location into text contexts; a retrieved
    ``chunk_id`` the snapshot lacks makes the item an ``unknown_chunks`` error naming each such field.

    Citations are kept as they are: one naming an id the system did not return (a snapshot chunk or not) is
    a citation of nothing retrieved, which citation accuracy counts as fabricated, not a broken item."""
    unknown = [f"retrieved[{index}].chunk_id {r.chunk_id!r}" for index, r in enumerate(response.retrieved)
               if r.chunk_id is not None and r.chunk_id not in chunks]
    retrieved = tuple(_placed(r, chunks, located) for r in response.retrieved
                      if r.chunk_id is None or r.chunk_id in chunks)
    response = replace(response, retrieved=retrieved)
    if unknown and response.ok:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        return replace(response, error=f"{shown}: not a chunk of corpus version {corpus_version} (a retrieved "
                                       "'chunk_id' names a snapshot chunk; send your own ids as 'id' with the 'text')",
                       error_kind="unknown_chunks")
    return response


def _placed(entry: RetrievedChunk, chunks: Mapping[str, SnapshotChunk],
            located: Mapping[tuple[str, str | None], Location | None]) -> RetrievedChunk:
    if entry.chunk_id is not None:
        chunk = chunks[entry.chunk_id]
        return replace(entry, text=entry.text or chunk.text, source=entry.source or chunk.path, span=Span.of(chunk))
    location = located[(entry.text, entry.source)]
    if location is None:
        return replace(entry, span=None, mapping="unmapped")
    return replace(entry, span=location.span, mapping=location.method, source=entry.source or location.span.path,
                   location_score=location.score if location.method in ("fuzzy", "part") else None,
                   elsewhere=location.elsewhere)


def run_rag(system: RagSystem, queries: Sequence[RagQuery], chunks: SnapshotChunks,
            progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
    """Answer every query; the run always finishes, with an error record for each failed item.

    Contexts returned as text are located in the pinned revision's documents (the source the system
    names first; ``rag_assets.evidence.locate``), each distinct (text, source) once; otherwise only the
    chunks the responses name are read."""
    if not queries:
        return []
    responses = system.answer(queries, progress)
    if len(responses) != len(queries):
        raise RuntimeError(f"RAG system {system.name} returned {len(responses)} responses for {len(queries)} queries")
    contexts = dict.fromkeys((r.text, r.source) for response in responses for r in response.retrieved
                             if r.chunk_id is None)
    located = {(text, source): chunks.locator().locate(text, source, part=True) for text, source in contexts}
    by_id = chunks.named({r.chunk_id for response in responses for r in response.retrieved if r.chunk_id is not None})
    corpus_version = queries[0].corpus_version
    return [_check_chunks(r, by_id, located, corpus_version) for r in responses]


def answer_items(system: RagSystem, items: Sequence[GoldenItem], corpus_version: str,
                 chunks: SnapshotChunks, progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
    """The RAG step of an evaluation, one code path for the rag_answers asset, the A/B comparison and
    ``rag_assets.evaluate``: each golden item's question asked over the pinned snapshot."""
    return run_rag(system, [RagQuery(i.item_id, i.question, corpus_version) for i in items], chunks, progress)


def context_mapping(responses: Sequence[RagResponse]) -> tuple[float, dict[str, int]]:
    """Over the answered items: the share of returned contexts not found in the pinned revision, and
    how many contexts each method placed (``chunk_id``, ``exact``, ``normalised``, ``fuzzy``, ``part``, ``unmapped``)."""
    contexts = [r for response in responses if response.ok for r in response.retrieved]
    methods: dict[str, int] = {}
    for context in contexts:
        methods[context.mapping] = methods.get(context.mapping, 0) + 1
    return (sum(1 for c in contexts if c.unmapped) / len(contexts) if contexts else 0.0), dict(sorted(methods.items()))
