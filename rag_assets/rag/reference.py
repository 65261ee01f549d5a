"""The built-in reference RAG system: BM25 retrieval, then Claude or the offline extractive generator.

Retrieval is version-aware: when a question names a product version ("in version 2.0") that
documents carry in their metadata, chunks of those documents are boosted before the top k are
kept, a metadata filter in all but name. Without it BM25 ranks near-identical chunks of another
version as often as the right ones, since "2.0" is in half the corpus.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMCall, LLMStats
from rag_assets.rag.bm25 import Bm25Index
from rag_assets.rag.models import Citation, RagQuery, RagResponse, RetrievedChunk
from rag_assets.rag.prompts import RAG_ANSWER

VERSION_BOOST = 1.5
OVERFETCH = 3
_VERSION = re.compile(r"\b\d+(?:\.\d+)+\b")


class ReferenceRagSystem:
    name = "reference"

    def __init__(self, index: Bm25Index, k: int, client: LLMClient, cache: LLMCache | None,
                 doc_versions: Mapping[str, str | None]) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.index, self.k, self.client, self.cache = index, k, client, cache
        self.doc_versions = doc_versions
        self.stats = LLMStats()

    def config(self) -> dict[str, Any]:
        return {"retriever": "bm25s", "k": self.k, "version_boost": VERSION_BOOST,
                "generator": f"{self.client.provider}/{self.client.model}", "prompt": RAG_ANSWER.ref}

    def _rerank(self, question: str, hits: list[RetrievedChunk]) -> list[RetrievedChunk]:
        named = set(_VERSION.findall(question))
        boosted = [replace(h, score=h.score * (VERSION_BOOST if self.doc_versions.get(h.chunk_id) in named else 1.0))
                   for h in hits]
        boosted.sort(key=lambda h: -h.score)
        return [replace(h, rank=rank) for rank, h in enumerate(boosted[: self.k], start=1)]

    def retrieve(self, questions: Sequence[str]) -> list[list[RetrievedChunk]]:
        hits = self.index.search_many(questions, self.k * OVERFETCH)
        return [self._rerank(question, found) for question, found in zip(questions, hits)]

    def answer(self, queries: Sequence[RagQuery], progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
        started = time.perf_counter()
        retrieved = self.retrieve([q.question for q in queries])
        retrieval_ms = (time.perf_counter() - started) * 1000 / max(1, len(queries))
        calls = [LLMCall(q.item_id, RAG_ANSWER, {
            "question": q.question,
            "chunks": [{"chunk_id": r.chunk_id, "text": r.text, "version": self.doc_versions.get(r.chunk_id)} for r in hits],
        }) for q, hits in zip(queries, retrieved)]
        results = self.client.run(calls, self.cache, progress)
        self.stats.add(results)
        responses = []
        for query, hits, result in zip(queries, retrieved, results):
            common = {"item_id": query.item_id, "retrieved": tuple(hits), "latency_ms": retrieval_ms + result.latency_ms,
                      "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
                      "cost_usd": result.cost_usd}
            if not result.ok:
                responses.append(RagResponse(answer=None, error=f"generation failed: {result.error}",
                                             error_kind=result.error_kind, **common))
                continue
            output = result.output
            responses.append(RagResponse(
                answer=output["answer"],
                citations=tuple(Citation(c["claim"], c["chunk_id"]) for c in output["citations"]),
                extra={"declined": output["declined"], "generator": result.provider}, **common))
        return responses
