"""Carry evidence spans into a later revision of their document, and find the chunks that hold them.

A golden item's evidence is pinned to the body it was found in (``EvidenceSpan.revision``). When the
corpus changes, each span is re-anchored in its document's new body:

- the body is the same (same hash): the span stands as it is;
- the body changed but the span's text is still in it, to the character: the span moves there (the
  occurrence nearest its old offset, so a repeated passage keeps its place), and the item stays
  valid: an edit elsewhere in the document never touches its evidence;
- the text is gone (edited, deleted, or the document removed): the span is lost, and its item is
  stale until an expert confirms it against the new text.

Only the exact text counts as the same evidence: a changed word may change the answer, so it is
an expert's call, not this module's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rag_assets.corpus.models import ChunkRef, SnapshotChunk, sha256_hex
from rag_assets.evidence.documents import Document
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP, EvidenceSpan, Span


def nearest_occurrence(body: str, text: str, near: int) -> int | None:
    """The offset of the occurrence of ``text`` in ``body`` closest to ``near`` (the earlier one on a tie)."""
    best: int | None = None
    at = body.find(text)
    while at >= 0:
        if best is None or abs(at - near) < abs(best - near):
            best = at
        if at > near:
            break
        at = body.find(text, at + 1)
    return best


def reanchor(span: EvidenceSpan, old_text: str | None, document: Document | None) -> EvidenceSpan | None:
    """``span`` in ``document`` (its path's body in the new corpus version), or None when its text is gone.

    ``old_text`` is the span's text in the body it was pinned to; it is checked against the span's text
    hash, so a wrong body can never re-anchor a span.
    """
    if document is None:
        return None
    if document.revision == span.revision:
        return span
    if not old_text or sha256_hex(old_text) != span.text_hash:
        return None
    at = nearest_occurrence(document.body, old_text, span.start)
    if at is None:
        return None
    return EvidenceSpan(span.path, document.revision, at, at + len(old_text), span.text_hash, span.grade)


class ChunkIndex:
    """A snapshot's chunks by document, in reading order: which of them hold a span."""

    def __init__(self, chunks: Iterable[SnapshotChunk]) -> None:
        by_path: dict[str, list[SnapshotChunk]] = {}
        for chunk in chunks:
            by_path.setdefault(chunk.path, []).append(chunk)
        self._by_path = {path: sorted(found, key=lambda c: c.start) for path, found in by_path.items()}

    def covering(self, spans: Iterable[Span], min_overlap: float = DEFAULT_MIN_OVERLAP) -> tuple[ChunkRef, ...]:
        """The chunks that hit any of ``spans`` (by the retrieval figures' overlap rule), span by span in
        reading order, each once: what a repinned item names as its relevant chunks."""
        found: dict[ChunkRef, None] = {}
        for span in spans:
            for chunk in self._by_path.get(span.path, ()):
                if Span(chunk.path, chunk.start, chunk.end).hits(span, min_overlap):
                    found[ChunkRef(chunk.chunk_id, chunk.content_hash)] = None
        return tuple(found)


def unchanged(span: EvidenceSpan, body_hashes: Mapping[str, str | None]) -> bool:
    """Whether the span's document has the very body it was pinned to in a version (``path -> body hash``)."""
    return bool(span.revision) and body_hashes.get(span.path) == span.revision
