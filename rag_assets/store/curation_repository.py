"""Applying review files and importing external golden sets: each one transaction, or nothing.

What a decision does:
- accept: the candidate becomes a golden item (revision 1); a candidate that re-queued a stale
  item adds a revision to that item instead, with the chunks of the new corpus version;
- edit: as accept, then one more revision with the edited question and/or answer (the old
  revision is kept);
- reject: the candidate is rejected; an item it re-queued is retired.
Every decision row keeps reviewer, time, file and row; a file (by content hash) applies once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, Engine

from rag_assets.corpus.models import ChunkRef
from rag_assets.curation.models import Decision, ReviewFile, ReviewProblem, ReviewRow
from rag_assets.errors import ReviewFileRejected
from rag_assets.generation.models import Candidate
from rag_assets.golden.models import ExternalItem
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.engine import retry_transaction
from rag_assets.store.golden_repository import add_revision, current_content, item_state, set_status
from rag_assets.store.tables import CandidateRow, ReviewDecisionRow, ReviewImportRow

CANDIDATE = CandidateRow.__table__
DECISION = ReviewDecisionRow.__table__
IMPORT = ReviewImportRow.__table__


@dataclass(frozen=True)
class ApplyOutcome:
    already_applied: bool = False
    decisions: int = 0
    accepted: int = 0
    edited: int = 0
    rejected: int = 0
    revisions_added: int = 0


class SqlCurationRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.candidates = SqlCandidateRepository(engine)

    def decisions(self, candidate_id: str | None = None) -> list[dict]:
        query = select(DECISION).order_by(DECISION.c.decision_id)
        if candidate_id is not None:
            query = query.where(DECISION.c.candidate_id == candidate_id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def apply_review(self, review: ReviewFile) -> ApplyOutcome:
        """Apply every decided row of a validated file in one transaction."""
        candidates = self.candidates.by_ids([row.candidate_id for row in review.rows])
        problems = [ReviewProblem(row.row, "decision", f"candidate {row.candidate_id} has no relevant chunk left in "
                                  "this corpus version (its evidence vanished); it can only be rejected")
                    for row in review.rows
                    if row.decision != Decision.REJECT and _evidence_vanished(candidates[row.candidate_id])]
        if problems:
            raise ReviewFileRejected(review.path, problems)

        def work(conn: Connection) -> ApplyOutcome:
            if conn.execute(select(IMPORT.c.sha256).where(IMPORT.c.sha256 == review.sha256)).first():
                return ApplyOutcome(already_applied=True)
            conn.execute(insert(IMPORT).values(sha256=review.sha256, file_name=Path(review.path).name,
                                               corpus_version=review.corpus_version, decisions=len(review.rows),
                                               undecided=review.undecided))
            counts = {"accepted": 0, "edited": 0, "rejected": 0, "revisions_added": 0}
            for row in review.rows:
                added = _apply_row(conn, review, row, candidates[row.candidate_id])
                counts["revisions_added"] += added
                counts[{"accept": "accepted", "edit": "edited", "reject": "rejected"}[row.decision.value]] += 1
            return ApplyOutcome(decisions=len(review.rows), **counts)

        return retry_transaction(self.engine, work)

    def import_items(self, mapped: Sequence[tuple[ExternalItem, tuple[ChunkRef, ...]]], corpus_version: str,
                     source: str, file_name: str, sha256: str) -> int:
        """External items become accepted golden items (revision 1, pinned to ``corpus_version``).

        Idempotent: an item id already present is left as it is. Returns how many were new.
        """

        def work(conn: Connection) -> int:
            new = 0
            for row_number, (item, refs) in enumerate(mapped, start=1):
                item_id = f"{source}:{item.external_id}"
                if item_state(conn, item_id) is not None:
                    continue
                decision_id = conn.execute(insert(DECISION).values(
                    candidate_id=item_id, corpus_version=corpus_version, decision=Decision.ACCEPT.value,
                    reviewer=f"import:{source}", notes="imported as already accepted", source_file=file_name,
                    source_sha256=sha256, source_row=row_number)).inserted_primary_key[0]
                add_revision(conn, item_id, question=item.question, answer=item.reference_answer, refs=refs,
                             corpus_version=corpus_version, decision_id=decision_id,
                             question_type=item.question_type, origin=f"imported:{source}")
                new += 1
            return new

        return retry_transaction(self.engine, work)


def _evidence_vanished(candidate: Candidate) -> bool:
    return candidate.question_type != "adversarial" and not candidate.relevant_chunks


def _apply_row(conn: Connection, review: ReviewFile, row: ReviewRow, candidate: Candidate) -> int:
    """Record one decision and what it does to the golden items; returns revisions added."""
    decision_id = conn.execute(insert(DECISION).values(
        candidate_id=row.candidate_id, corpus_version=row.corpus_version, decision=row.decision.value,
        edited_question=row.edited_question, edited_answer=row.edited_answer, notes=row.notes, reviewer=row.reviewer,
        source_file=Path(review.path).name, source_sha256=review.sha256, source_row=row.row)).inserted_primary_key[0]
    conn.execute(update(CANDIDATE).where(CANDIDATE.c.candidate_id == row.candidate_id).values(status=row.decision.value))
    item_id = candidate.origin_item_id or candidate.candidate_id
    state = item_state(conn, item_id)
    if row.decision == Decision.REJECT:
        if state is not None:
            set_status(conn, item_id, "retired" if candidate.origin_item_id else "rejected")
        return 0
    added = 0
    common = {"refs": candidate.relevant_chunks, "corpus_version": candidate.corpus_version,
              "decision_id": decision_id, "question_type": candidate.question_type, "origin": "generated"}
    if state is None or candidate.origin_item_id:
        add_revision(conn, item_id, question=candidate.question, answer=candidate.reference_answer, **common)
        added += 1
    else:
        set_status(conn, item_id, "accepted")
    if row.decision == Decision.EDIT:
        question, answer = current_content(conn, item_id)
        add_revision(conn, item_id, question=row.edited_question or question,
                     answer=row.edited_answer or answer, **common)
        added += 1
    return added
