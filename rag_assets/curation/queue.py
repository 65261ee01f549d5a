"""The review queue: what an expert sees for each pending candidate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.curation.agreement import ADJUDICATOR_PREFIX, Content
from rag_assets.curation.models import OUTBOX_COLUMNS
from rag_assets.curation.workbook import WorkbookRow
from rag_assets.generation.models import Candidate


def outbox_paths(outbox: Path, corpus_version: str) -> tuple[Path, Path]:
    """The review files of a corpus version: the name says which version they were made against."""
    return outbox / f"review-{corpus_version}.csv", outbox / f"review-{corpus_version}.jsonl"


def _conflict_note(decisions: Mapping[str, Content]) -> str:
    stood = "; ".join(f"{reviewer}: {' / '.join(part for part in content if part)}"
                      for reviewer, content in sorted(decisions.items()))
    return (f"CONFLICT between reviewers ({stood}). Decide it again (each reviewer's latest decision counts) "
            f"or as reviewer {ADJUDICATOR_PREFIX}<name> to settle it.")


def evidence(candidate: Candidate, chunks: Mapping[str, SnapshotChunk]) -> list[SnapshotChunk]:
    """The snapshot chunks an expert should read for ``candidate`` (those still in the snapshot)."""
    shown = candidate.relevant_chunks or candidate.source_chunks
    return [chunks[r.chunk_id] for r in shown if r.chunk_id in chunks]


def review_note(candidate: Candidate, conflicts: Mapping[str, Mapping[str, Content]] | None = None) -> str:
    """Why a candidate is (back) in the queue ("" for a new one): a reviewers' conflict, a re-review."""
    notes = [_conflict_note(conflicts[candidate.candidate_id])] if candidate.candidate_id in (conflicts or {}) else []
    if candidate.origin_item_id:
        notes.append(f"RE-REVIEW of golden item {candidate.origin_item_id}: its evidence changed in this corpus "
                     f"version." + (f"\n{candidate.change_note}" if candidate.change_note else ""))
    return "\n".join(notes)


def workbook_rows(candidates: Sequence[Candidate], chunks: Mapping[str, SnapshotChunk],
                  rows: Sequence[Mapping[str, str]], conflicts: Mapping[str, Mapping[str, Content]] | None = None
                  ) -> list[WorkbookRow]:
    """The review workbook's rows: ``rows`` (from :func:`review_rows`) with the evidence in full."""
    return [WorkbookRow(row, evidence(candidate, chunks), review_note(candidate, conflicts))
            for candidate, row in zip(candidates, rows, strict=True)]


def review_rows(candidates: Sequence[Candidate], chunks: Mapping[str, SnapshotChunk],
                excerpt_chars: int = 400, conflicts: Mapping[str, Mapping[str, Content]] | None = None
                ) -> list[dict[str, str]]:
    """One row per candidate with the evidence an expert needs and empty decision columns; a
    candidate in ``conflicts`` (id -> the reviewers' standing decisions) says so first."""
    conflicts = conflicts or {}
    rows = []
    for candidate in candidates:
        passages = evidence(candidate, chunks)
        limit = None if candidate.origin_item_id else excerpt_chars  # a re-review shows the changed text whole
        excerpt = "\n---\n".join(f"[{c.chunk_id}] {_excerpt(c.text, limit)}" for c in passages)
        if candidate.origin_item_id:
            excerpt = excerpt or "(no matching chunk left: reject it)"
        note = review_note(candidate, conflicts)
        if note:
            excerpt = f"{note}\n{excerpt}"
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
