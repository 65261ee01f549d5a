"""Re-anchoring evidence spans in a new revision of their document, by hand-computed cases."""

from __future__ import annotations

import pytest

from rag_assets.corpus.models import ChunkRef, SnapshotChunk, sha256_hex
from rag_assets.evidence.anchor import ChunkIndex, nearest_occurrence, reanchor, unchanged
from rag_assets.evidence.documents import Document
from rag_assets.evidence.spans import EvidenceSpan, Span

OLD = "Intro.\nThe limit is 15 GB per project.\nOutro."
EVIDENCE_TEXT = "The limit is 15 GB per project."


def _pinned(body: str, text: str, grade: float = 1.0) -> EvidenceSpan:
    at = body.index(text)
    return EvidenceSpan("limits.md", sha256_hex(body), at, at + len(text), sha256_hex(text), grade)


@pytest.mark.parametrize(("body", "text", "near", "expected"), [
    ("ab ab ab", "ab", 0, 0),
    ("ab ab ab", "ab", 4, 3),
    ("ab ab ab", "ab", 5, 6),  # 6 is 1 away, 3 is 2 away
    ("ab..ab", "ab", 2, 0),  # a tie goes to the earlier
    ("xyz", "ab", 0, None),
])
def test_the_nearest_occurrence_is_the_closest_to_the_old_offset(body, text, near, expected):
    assert nearest_occurrence(body, text, near) == expected


def test_a_span_in_an_unchanged_body_stands_as_it_is():
    span = _pinned(OLD, EVIDENCE_TEXT)
    assert reanchor(span, None, Document("limits.md", OLD)) is span


def test_an_edit_elsewhere_moves_the_span_to_the_same_text_with_its_grade():
    span = _pinned(OLD, EVIDENCE_TEXT, grade=2.0)
    new_body = "A new first paragraph of 36 chars.\n" + OLD
    moved = reanchor(span, EVIDENCE_TEXT, Document("limits.md", new_body))
    assert (moved.start, moved.end) == (span.start + 35, span.end + 35)
    assert new_body[moved.start:moved.end] == EVIDENCE_TEXT
    assert (moved.revision, moved.text_hash, moved.grade) == (sha256_hex(new_body), span.text_hash, 2.0)


def test_a_changed_word_in_the_evidence_loses_the_span():
    span = _pinned(OLD, EVIDENCE_TEXT)
    assert reanchor(span, EVIDENCE_TEXT, Document("limits.md", OLD.replace("15 GB", "20 GB"))) is None


def test_a_removed_document_or_an_unknown_text_loses_the_span():
    span = _pinned(OLD, EVIDENCE_TEXT)
    assert reanchor(span, EVIDENCE_TEXT, None) is None
    assert reanchor(span, None, Document("limits.md", "x" + OLD)) is None


def test_a_text_that_is_not_the_spans_own_never_anchors_it():
    span = _pinned(OLD, EVIDENCE_TEXT)
    assert reanchor(span, "Intro.", Document("limits.md", "x" + OLD)) is None


def test_of_two_equal_passages_the_span_keeps_the_one_nearest_its_place():
    body = f"{EVIDENCE_TEXT} middle {EVIDENCE_TEXT}"
    span = EvidenceSpan("limits.md", sha256_hex(body), len(body) - len(EVIDENCE_TEXT), len(body),
                        sha256_hex(EVIDENCE_TEXT))
    moved = reanchor(span, EVIDENCE_TEXT, Document("limits.md", "new " + body))
    assert moved.end == len(body) + 4


def test_unchanged_needs_the_same_body_hash_and_a_known_revision():
    span = _pinned(OLD, EVIDENCE_TEXT)
    assert unchanged(span, {"limits.md": sha256_hex(OLD)})
    assert not unchanged(span, {"limits.md": sha256_hex("other")})
    assert not unchanged(EvidenceSpan("limits.md", "", 0, 5, "h"), {"limits.md": ""})


def _chunk(chunk_id: str, path: str, start: int, end: int) -> SnapshotChunk:
    return SnapshotChunk(chunk_id, f"h-{chunk_id}", path, path, None, None, "", "x" * (end - start), start, end)


def test_covering_chunks_are_those_the_overlap_rule_counts_as_hits_in_reading_order():
    chunks = [_chunk("c2", "a.md", 100, 200), _chunk("c1", "a.md", 0, 120), _chunk("c3", "a.md", 180, 300),
              _chunk("d1", "b.md", 0, 100)]
    # 90..190: c1 shares 30 of its 120 (< half of the shorter, the 100-char span): no; c2 shares 90 of 100: yes;
    # c3 shares 10: no
    index = ChunkIndex(chunks)
    assert index.covering([Span("a.md", 90, 190)]) == (ChunkRef("c2", "h-c2"),)
    assert index.covering([Span("a.md", 90, 190)], min_overlap=0.2) == (ChunkRef("c1", "h-c1"), ChunkRef("c2", "h-c2"))
    assert index.covering([Span("b.md", 10, 20), Span("a.md", 0, 10)]) == (ChunkRef("d1", "h-d1"), ChunkRef("c1", "h-c1"))
