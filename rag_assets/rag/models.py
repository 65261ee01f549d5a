"""What a RAG system is asked and what it answers.

The contract every system meets (the built-in reference one, a user's Python callable, a user's
HTTP endpoint): given a question, return the answer, the ranked retrieved contexts (snapshot chunk
ids, or the system's own texts with its own ids), citations (claim -> id), latency, tokens, and an
error when it failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_assets.evidence.spans import Span


@dataclass(frozen=True)
class RagQuery:
    item_id: str
    question: str
    corpus_version: str


@dataclass(frozen=True)
class RetrievedChunk:
    """One ranked context as the system returned it, and where it lies in the pinned corpus revision.

    ``chunk_id`` is set when the system named a snapshot chunk (its ``span`` is the chunk's);
    otherwise the system gave a text (maybe with its own ``own_id``), which the run locates in the
    revision's documents (``rag_assets.evidence.locate``): ``span`` where it was found, ``mapping``
    how (``chunk_id`` for named chunks, ``exact``, ``normalised``, ``fuzzy`` or ``part`` with
    ``location_score``, or ``unmapped``), and ``elsewhere`` the other places the same text is found (a
    copy of the document). Judges read ``text``, the words the system really returned; retrieval
    metrics read the span and credit the text at any of its places.
    """

    chunk_id: str | None
    text: str
    score: float
    rank: int  # 1-based
    own_id: str | None = None
    source: str | None = None  # document path relative to the corpus root, as the system or the location says
    span: Span | None = None
    mapping: str = "chunk_id"
    location_score: float | None = None
    elsewhere: tuple[Span, ...] = ()

    @property
    def places(self) -> tuple[Span, ...]:
        """Every place the context's text is found, its ``span`` first (none when unmapped)."""
        return (self.span, *self.elsewhere) if self.span is not None else ()

    @property
    def key(self) -> str:
        """The id the system knows this context by (judges and citations use it)."""
        return self.chunk_id or self.own_id or f"context-{self.rank}"

    @property
    def unmapped(self) -> bool:
        """A text not found in the pinned revision: a retrieval miss, whatever it says."""
        return self.chunk_id is None and self.span is None

    def unplaced_words(self, words: int) -> int:
        """Of the context's ``words``, those its span does not hold: all of an unmapped text's, the share outside
        the run a ``part`` placement holds, none otherwise. Token precision counts them as retrieved, not evidence."""
        if self.unmapped:
            return words
        return round(words * (1 - self.location_score)) if self.mapping == "part" and self.location_score else 0


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

    @property
    def contexts_unmapped_share(self) -> float | None:
        """Share of the returned contexts not found in the pinned revision; None when none was returned."""
        if not self.retrieved:
            return None
        return sum(1 for r in self.retrieved if r.unmapped) / len(self.retrieved)


def failed(item_id: str, kind: str, message: str, latency_ms: float = 0.0) -> RagResponse:
    return RagResponse(item_id=item_id, answer=None, latency_ms=latency_ms, error=message, error_kind=kind)
