"""Spans: a stretch of one document's body, by character offsets.

Evidence and retrieved contexts are both spans of the pinned corpus revision, so whether a context
retrieved a piece of evidence is a question about two intervals, not about whose chunks they were
cut into. An ``EvidenceSpan`` also pins the body it points into (``revision``: the body's hash) and
the text it covers (``text_hash``), so a later corpus version can tell an unchanged span from an edited
one, and a grade for graded relevance labels.

A text that occurs in several places (a live page and its archived copy, a passage repeated in a
document) has one span where it was placed and the others ``elsewhere``: it is still one context and
one piece of evidence, credited wherever it matches (``rag_assets.evidence.locate`` says where a text
is placed, ``rag_assets.scoring.retrieval`` how the places are credited).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: A context hits an evidence span when they overlap by at least this share of the shorter of the two; evidence is
#: found when the retrieved contexts together cover this share of it.
DEFAULT_MIN_OVERLAP = 0.5


class Located(Protocol):
    path: str
    start: int
    end: int


@dataclass(frozen=True, order=True)
class Span:
    """``body[start:end]`` of the document at ``path`` (offsets in characters, end exclusive)."""

    path: str
    start: int
    end: int

    @classmethod
    def of(cls, located: Located) -> Span:
        """The span a chunk (or anything with ``path``, ``start`` and ``end``) covers in its document."""
        return cls(located.path, located.start, located.end)

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"a span needs 0 <= start < end, got {self.start}..{self.end} in {self.path}")

    @property
    def length(self) -> int:
        return self.end - self.start

    def overlap(self, other: Span) -> int:
        """Characters the two spans share (0 in different documents)."""
        if self.path != other.path:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))

    def hits(self, other: Span, min_overlap: float = DEFAULT_MIN_OVERLAP) -> bool:
        """Whether the spans overlap by at least ``min_overlap`` of the shorter one."""
        shared = self.overlap(other)
        return shared > 0 and shared >= min_overlap * min(self.length, other.length)


@dataclass(frozen=True)
class EvidenceSpan:
    """A span that answers a golden item, pinned to the body it was found in."""

    path: str
    revision: str  # the hash of the document body the offsets point into
    start: int
    end: int
    text_hash: str  # sha256 of body[start:end]
    grade: float = 1.0
    #: the other places the same text occurs, each pinned to its own body: alternatives, not more evidence
    elsewhere: tuple[EvidenceSpan, ...] = ()

    @property
    def span(self) -> Span:
        return Span(self.path, self.start, self.end)

    @property
    def places(self) -> tuple[Span, ...]:
        """Every place this evidence's text occurs, the one it was placed at first."""
        return (self.span, *(e.span for e in self.elsewhere))

    def to_json(self) -> dict:
        data: dict = {"path": self.path, "revision": self.revision, "start": self.start, "end": self.end,
                      "text_hash": self.text_hash}
        if self.grade != 1.0:
            data["grade"] = self.grade
        if self.elsewhere:
            data["elsewhere"] = [e.to_json() for e in self.elsewhere]
        return data

    @classmethod
    def from_json(cls, data: dict) -> EvidenceSpan:
        return cls(data["path"], data["revision"], int(data["start"]), int(data["end"]), data["text_hash"],
                   float(data.get("grade", 1.0)), tuple(cls.from_json(e) for e in data.get("elsewhere", ())))
