"""The RAG-system interface, and running one over a golden set with every failure recorded per item."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from rag_assets.corpus.models import sha256_hex
from rag_assets.errors import ConfigError
from rag_assets.rag.models import RagQuery, RagResponse, RetrievedChunk


class RagSystem(Protocol):
    """Anything that answers questions over the pinned corpus: reference, callable or HTTP."""

    name: str

    def config(self) -> dict[str, Any]:
        """What identifies this system's behaviour (never secrets): its hash is recorded per run."""

    def answer(self, queries: Sequence[RagQuery]) -> list[RagResponse]:
        """One response per query, in order; a failure is a response with ``error`` set."""


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


def _check_chunks(response: RagResponse, texts: Mapping[str, str], corpus_version: str) -> RagResponse:
    """Fill chunk texts from the snapshot; chunk ids the snapshot lacks make the item an error."""
    named = [r.chunk_id for r in response.retrieved] + [c.chunk_id for c in response.citations]
    unknown = sorted({chunk_id for chunk_id in named if chunk_id not in texts})
    retrieved = tuple(replace(r, text=r.text or texts[r.chunk_id]) for r in response.retrieved if r.chunk_id in texts)
    response = replace(response, retrieved=retrieved,
                       citations=tuple(c for c in response.citations if c.chunk_id in texts))
    if unknown and response.ok:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        return replace(response, error=f"chunk ids not in corpus version {corpus_version}: {shown}",
                       error_kind="unknown_chunks")
    return response


def run_rag(system: RagSystem, queries: Sequence[RagQuery], texts: Mapping[str, str]) -> list[RagResponse]:
    """Answer every query; the run always finishes, with an error record for each failed item."""
    if not queries:
        return []
    responses = system.answer(queries)
    if len(responses) != len(queries):
        raise RuntimeError(f"RAG system {system.name} returned {len(responses)} responses for {len(queries)} queries")
    corpus_version = queries[0].corpus_version
    return [_check_chunks(r, texts, corpus_version) for r in responses]


def retrieved_from(rows: Sequence[Mapping[str, Any]]) -> tuple[RetrievedChunk, ...]:
    return tuple(RetrievedChunk(r["chunk_id"], r.get("text") or "", float(r.get("score", 0.0)), int(r.get("rank", i)))
                 for i, r in enumerate(rows, start=1))
