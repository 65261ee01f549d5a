"""What a RAG system is asked and what it answers.

The contract every system meets (the built-in reference one, a user's Python callable, a user's
HTTP endpoint): given a question, return the answer, the ranked retrieved chunks, citations
(claim -> chunk id), latency, tokens, and an error when it failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RagQuery:
    item_id: str
    question: str
    corpus_version: str


@dataclass(frozen=True)
class RetrievedChunk:
    chunk_id: str
    text: str
    score: float
    rank: int  # 1-based


@dataclass(frozen=True)
class Citation:
    claim: str
    chunk_id: str


@dataclass(frozen=True)
class RagResponse:
    """One item's outcome. ``error`` set means the system failed on this item (the run goes on)."""

    item_id: str
    answer: str | None
    retrieved: tuple[RetrievedChunk, ...] = ()
    citations: tuple[Citation, ...] = ()
    latency_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    error: str | None = None
    error_kind: str | None = None  # exception | timeout | bad_response | unknown_chunks | http_error
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


def failed(item_id: str, kind: str, message: str, latency_ms: float = 0.0) -> RagResponse:
    return RagResponse(item_id=item_id, answer=None, latency_ms=latency_ms, error=message, error_kind=kind)
