"""The review queue: what an expert sees for each pending candidate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.curation.models import OUTBOX_COLUMNS
from rag_assets.curation.workbook import WorkbookRow
from rag_assets.generation.models import Candidate


def outbox_paths(outbox: Path, corpus_version: str) -> tuple[Path, Path]:
    """The review files of a corpus version: the name says which version they were made against."""
    return outbox / f"review-{corpus_version}.csv", outbox / f"review-{corpus_version}.jsonl"


def evidence(candidate: Candidate, chunks: Mapping[str, SnapshotChunk]) -> list[SnapshotChunk]:
    """The snapshot chunks an expert should read for ``candidate`` (those still in the snapshot)."""
    shown = candidate.relevant_chunks or candidate.source_chunks
    return [chunks[r.chunk_id] for r in shown if r.chunk_id in chunks]


def re_review_note(candidate: Candidate) -> str:
    """Why a candidate that was already golden is back in the queue ("" for a new one)."""
    return (f"RE-REVIEW of golden item {candidate.origin_item_id}: its evidence changed in this corpus version."
            if candidate.origin_item_id else "")


def workbook_rows(candidates: Sequence[Candidate], chunks: Mapping[str, SnapshotChunk],
                  rows: Sequence[Mapping[str, str]]) -> list[WorkbookRow]:
    """The review workbook's rows: ``rows`` (from :func:`review_rows`) with the evidence in full."""
    return [WorkbookRow(row, evidence(candidate, chunks), re_review_note(candidate))
            for candidate, row in zip(candidates, rows, strict=True)]


def review_rows(candidates: Sequence[Candidate], chunks: Mapping[str, SnapshotChunk],
                excerpt_chars: int = 400) -> list[dict[str, str]]:
    """One row per candidate with the evidence an expert needs and empty decision columns."""
    rows = []
    for candidate in candidates:
        passages = evidence(candidate, chunks)
        limit = None if candidate.origin_item_id else excerpt_chars  # a re-review shows the changed text whole
        excerpt = "\n---\n".join(f"[{c.chunk_id}] {_excerpt(c.text, limit)}" for c in passages)
        if candidate.origin_item_id:
            excerpt = f"{re_review_note(candidate)}\n{excerpt or '(no matching chunk left: reject it)'}"
        row = {column: "" for column in OUTBOX_COLUMNS}
        row.update(candidate_id=candidate.candidate_id, corpus_version=candidate.corpus_version,
                   question_type=candidate.question_type, question=candidate.question,
                   reference_answer=candidate.reference_answer,
                   source_document="; ".join(dict.fromkeys(c.path for c in passages)), chunk_excerpt=excerpt)
        rows.append(row)
    return rows


def _excerpt(text: str, limit: int | None) -> str:
    flat = " ".join(text.split())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 3].rsplit(" ", 1)[0] + "..."
