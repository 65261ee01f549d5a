"""One item as every metric sees it: the golden item, the system's response, and what is derived
from them once for all metrics (the contexts as the judge reads them, their document versions)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from rag_assets.evidence.documents import Documents
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP, EvidenceSpan
from rag_assets.golden.models import GoldenItem
from rag_assets.rag.models import RagResponse, RetrievedChunk
from rag_assets.scoring.embedding import Embedder

T = TypeVar("T")


def context_version(chunk: RetrievedChunk, versions: Mapping[str, str | None]) -> str | None:
    """The version of the document a context lies in (``versions``: document path -> its version; a
    context named by an id and placed nowhere, as a production log or a single judged answer gives it,
    by that id)."""
    if chunk.span is not None:
        return versions.get(chunk.span.path)
    return versions.get(chunk.chunk_id) if chunk.chunk_id is not None else None


@dataclass
class ItemContext:
    """What a metric scores one item from (an item the system failed on: a response that answers and retrieves
    nothing, ``Metric.score_errored``). ``versions``: document path (or context id) -> version;
    ``statements``: the reference answer's statements; ``evidence`` and ``documents`` for the retrieval
    metrics (token figures only where ``documents`` are known)."""

    item: GoldenItem
    response: RagResponse
    versions: Mapping[str, str | None]
    statements: Sequence[str] = ()
    evidence: Sequence[EvidenceSpan] = ()
    documents: Documents | None = None
    embedder: Embedder | None = None
    k: int = 5
    min_overlap: float = DEFAULT_MIN_OVERLAP
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def chunks(self) -> list[dict]:
        """What the judge reads: the texts the system really returned, under the ids it knows them by."""
        return [{"chunk_id": r.key, "text": r.text, "version": context_version(r, self.versions)}
                for r in self.response.retrieved]

    @cached_property
    def retrieved_ids(self) -> list[str]:
        return [r.key for r in self.response.retrieved]

    @cached_property
    def retrieved_versions(self) -> dict[str, str | None]:
        return {r.key: context_version(r, self.versions) for r in self.response.retrieved}

    def shared(self, name: str, compute: Callable[[ItemContext], T]) -> T:
        """``compute(self)`` once per item for every metric that asks under ``name`` (a formula family,
        such as the retrieval figures, computes all its members at once)."""
        if name not in self._shared:
            self._shared[name] = compute(self)
        return self._shared[name]
