"""Applying review files and importing external golden sets: each one transaction, or nothing.

What a decision does:
- accept: the candidate becomes a golden item (revision 1); a candidate that re-queued a stale
  item adds a revision to that item instead, with the chunks of the new corpus version;
- edit: as accept, then one more revision with the edited question and/or answer (the old
  revision is kept);
- reject: the candidate is rejected; an item it re-queued is retired.
Every decision row keeps reviewer, time, file and row; a file (by content hash) applies once.

Several reviewers (see :mod:`rag_assets.curation.agreement`): a decision takes effect only while
the decisions standing for its candidate agree; a second reviewer who agrees is recorded beside
the first, one who disagrees turns the candidate into a ``conflict`` and leaves the golden set as
it was until the reviewers agree or an adjudicator decides. Never last writer wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection, Engine

from rag_assets.curation.agreement import ADJUDICATOR_PREFIX, Content, ReviewerAgreement, agreed, pairwise_agreement, standing
from rag_assets.curation.models import Decision, ReviewFile, ReviewRow
from rag_assets.curation.review_file import refuse_undoable
from rag_assets.evidence.spans import EvidenceSpan
from rag_assets.generation.models import Candidate
from rag_assets.golden.importers import derived_id, flat
from rag_assets.golden.models import REVIEWED_ORIGIN, UNREVIEWED_ORIGIN, Replaced
from rag_assets.golden.pinning import PinnedItem
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import chunk_evidence
from rag_assets.store.engine import retry_transaction
from rag_assets.store.golden_repository import (
    ITEM,
    REVISION,
    add_revision,
    current_content,
    item_state,
    set_origin,
    set_status,
)
from rag_assets.store.tables import CandidateRow, ReviewDecisionRow, ReviewImportRow

CANDIDATE = CandidateRow.__table__
CONFLICT = "conflict"  # the candidate status while its reviewers disagree
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
    agreements: int = 0  # decisions that agreed with what already stood: recorded, nothing else to do
    conflicts: int = 0  # decisions that disagreed with another reviewer's: the candidate awaits adjudication


@dataclass(frozen=True)
class ImportedItems:
    """What an import wrote: ``new`` items, and the items whose reference it ``replaced``."""

    new: int
    replaced: tuple[Replaced, ...] = ()


@dataclass(frozen=True)
class Conflict:
    candidate_id: str
    decisions: dict[str, Content]  # reviewer -> the decision that stands


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

    def is_applied(self, sha256: str) -> bool:
        """Whether a file with these bytes was applied already (its import is recorded by hash)."""
        with self.engine.connect() as conn:
            return conn.execute(select(IMPORT.c.sha256).where(IMPORT.c.sha256 == sha256)).first() is not None

    def applied_files(self, corpus_version: str) -> list[str]:
        """The hashes of the review files of ``corpus_version`` applied so far, sorted."""
        with self.engine.connect() as conn:
            return list(conn.execute(select(IMPORT.c.sha256).where(IMPORT.c.corpus_version == corpus_version)
                                     .order_by(IMPORT.c.sha256)).scalars())

    def unreviewed_items(self, corpus_version: str) -> list[str]:
        """The items that trial mode made from ``corpus_version``'s candidates and no expert has decided
        yet (origin ``generated:unreviewed``), sorted."""
        query = (select(ITEM.c.item_id).join(CANDIDATE, CANDIDATE.c.candidate_id == ITEM.c.item_id)
                 .where(CANDIDATE.c.corpus_version == corpus_version, ITEM.c.origin == UNREVIEWED_ORIGIN)
                 .order_by(ITEM.c.item_id))
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def apply_review(self, review: ReviewFile) -> ApplyOutcome:
        """Apply every decided row of a validated file in one transaction, or none of them when
        ``refuse_undoable`` finds a row the candidates as stored now cannot take."""
        candidates = self.candidates.by_ids([row.candidate_id for row in review.rows])
        refuse_undoable(review, candidates)

        def work(conn: Connection) -> ApplyOutcome:
            if conn.execute(select(IMPORT.c.sha256).where(IMPORT.c.sha256 == review.sha256)).first():
                return ApplyOutcome(already_applied=True)
            conn.execute(insert(IMPORT).values(sha256=review.sha256, file_name=Path(review.path).name,
                                               corpus_version=review.corpus_version, decisions=len(review.rows),
                                               undecided=review.undecided))
            counts = {"accepted": 0, "edited": 0, "rejected": 0, "revisions_added": 0, "agreements": 0, "conflicts": 0}
            for row in review.rows:
                history = _history(conn, row.candidate_id)
                before, after = standing(history), standing([*history, (row.reviewer, _content(row))])
                decision_id = _record(conn, review, row)
                verdict = agreed(after)
                if verdict is None:
                    conn.execute(update(CANDIDATE).where(CANDIDATE.c.candidate_id == row.candidate_id)
                                 .values(status=CONFLICT))
                    counts["conflicts"] += 1
                elif before and agreed(before) == verdict:
                    counts["agreements"] += 1
                else:
                    counts["revisions_added"] += _apply_row(conn, row, candidates[row.candidate_id], decision_id)
                    counts[{"accept": "accepted", "edit": "edited", "reject": "rejected"}[row.decision.value]] += 1
            return ApplyOutcome(decisions=len(review.rows), **counts)

        return retry_transaction(self.engine, work)

    def conflicts(self, corpus_version: str) -> list[Conflict]:
        """The candidates of ``corpus_version`` whose standing decisions disagree, by id."""
        with self.engine.connect() as conn:
            ids = conn.execute(select(CANDIDATE.c.candidate_id).where(
                CANDIDATE.c.corpus_version == corpus_version, CANDIDATE.c.status == CONFLICT)
                .order_by(CANDIDATE.c.candidate_id)).scalars().all()
            return [Conflict(candidate_id, standing(_history(conn, candidate_id))) for candidate_id in ids]

    def reviewer_agreement(self, corpus_version: str) -> list[ReviewerAgreement]:
        """Cohen's kappa (and the raw share) of every two reviewers who decided the same candidates
        of ``corpus_version``, on each reviewer's latest decision; adjudicators are not raters."""
        latest: dict[str, dict[str, str]] = {}
        query = (select(DECISION.c.candidate_id, DECISION.c.reviewer, DECISION.c.decision)
                 .where(DECISION.c.corpus_version == corpus_version).order_by(DECISION.c.decision_id))
        with self.engine.connect() as conn:
            for candidate_id, reviewer, decision in conn.execute(query):
                if not reviewer.startswith((ADJUDICATOR_PREFIX, "import:")):
                    latest.setdefault(candidate_id, {})[reviewer] = decision
        return pairwise_agreement(latest)

    def import_items(self, pinned: Sequence[PinnedItem], corpus_version: str, source: str, file_name: str,
                     sha256: str) -> ImportedItems:
        """External items become accepted golden items (revision 1, pinned to ``corpus_version``) with
        their evidence spans.

        Idempotent: an item id already present is left as it is. An item the file gave no id (its id a hash of
        question and reference, so a corrected reference comes under a new id) asking the question (whitespace
        collapsed) of an accepted item imported from ``source`` before is that item. With the same reference it
        is nothing new; with another, the item gets a revision with the file's text, recorded as an ``edit``
        decision of the import, as an expert's edit would be: the golden-set versions made before keep the
        revision they hold, the next one has the new. An item with an id of its own is that id's item only, and
        items of other origins (generated and reviewed) are never matched: an import does not overrule an expert.
        """

        def work(conn: Connection) -> ImportedItems:
            origin = f"imported:{source}"
            asked = _asked(conn, origin, source)
            new, replaced = 0, []
            for row_number, (item, refs, evidence) in enumerate(
                    ((p.item, p.refs, p.evidence) for p in pinned), start=1):
                item_id = f"{source}:{item.external_id}"
                if item_state(conn, item_id) is not None:
                    continue
                same = asked.get(flat(item.question)) if item.derived_id else None
                if same is not None and flat(same[1]) == flat(item.reference_answer):
                    continue
                target = item_id if same is None else same[0]
                values = ({"decision": Decision.ACCEPT.value, "notes": "imported as already accepted"} if same is None
                          else {"decision": Decision.EDIT.value, "edited_question": item.question,
                                "edited_answer": item.reference_answer,
                                "notes": f"reference replaced: {file_name} asks the question again with another one"})
                decision_id = conn.execute(insert(DECISION).values(
                    candidate_id=target, corpus_version=corpus_version, reviewer=f"import:{source}",
                    source_file=file_name, source_sha256=sha256, source_row=row_number, **values,
                )).inserted_primary_key[0]
                revision = add_revision(conn, target, question=item.question, answer=item.reference_answer, refs=refs,
                                        corpus_version=corpus_version, decision_id=decision_id,
                                        question_type=item.question_type, origin=origin, evidence=evidence)
                if same is None:
                    new += 1
                else:
                    replaced.append(Replaced(target, item.location, same[1], item.reference_answer, revision))
                if item.derived_id:
                    asked[flat(item.question)] = (target, item.reference_answer)
            return ImportedItems(new, tuple(replaced))

        return retry_transaction(self.engine, work)

    def accept_unreviewed(self, candidates: Sequence[Candidate]) -> int:
        """Trial mode (:mod:`rag_assets.curation.accept_all`): each candidate becomes a golden item of origin
        ``generated:unreviewed`` with no review decision, and stays pending for the experts. Idempotent: a
        candidate whose item exists (accepted before, or rejected by an expert) is left as it is. Returns how
        many items were new."""

        def work(conn: Connection) -> int:
            new = [c for c in candidates if item_state(conn, c.candidate_id) is None]
            for candidate in new:
                add_revision(conn, candidate.candidate_id, question=candidate.question,
                             answer=candidate.reference_answer, refs=candidate.relevant_chunks,
                             corpus_version=candidate.corpus_version, decision_id=None,
                             question_type=candidate.question_type, origin=UNREVIEWED_ORIGIN,
                             evidence=_chunk_spans(conn, candidate))
            return len(new)

        return retry_transaction(self.engine, work)


def _chunk_spans(conn: Connection, candidate: Candidate) -> tuple[EvidenceSpan, ...]:
    """A generated item's evidence: the spans of its relevant chunks, pinned to their bodies, so that a later
    corpus version re-anchors them (none where a chunk is unknown or its body predates the body store)."""
    found = chunk_evidence(conn, {r.chunk_id for r in candidate.relevant_chunks}, candidate.corpus_version)
    spans = tuple(found.get(r.chunk_id) for r in candidate.relevant_chunks)
    return spans if all(span is not None and span.revision for span in spans) else ()


def _asked(conn: Connection, origin: str, source: str) -> dict[str, tuple[str, str]]:
    """The accepted items of ``origin`` imported without an id of their own (their id derived from their first
    revision's question and reference), by their current question (whitespace collapsed): (item id, current
    reference). An item the team named is that id's item only, never one a row without an id corrects. Where items
    imported before this rule ask one question, the first by id stands for them."""
    current, first = REVISION.alias("current_revision"), REVISION.alias("first_revision")
    query = (select(ITEM.c.item_id, current.c.question, current.c.reference_answer, first.c.question,
                    first.c.reference_answer)
             .join(current, (current.c.item_id == ITEM.c.item_id) & (current.c.revision == ITEM.c.current_revision))
             .join(first, (first.c.item_id == ITEM.c.item_id) & (first.c.revision == 1))
             .where(ITEM.c.origin == origin, ITEM.c.status == "accepted").order_by(ITEM.c.item_id.desc()))
    return {flat(question): (item_id, reference) for item_id, question, reference, first_question, first_reference
            in conn.execute(query) if item_id == f"{source}:{derived_id(first_question, first_reference)}"}


def _content(row: ReviewRow) -> Content:
    return (row.decision.value, row.edited_question, row.edited_answer)


def _history(conn: Connection, candidate_id: str) -> list[tuple[str, Content]]:
    """Every decision recorded for a candidate, oldest first, as (reviewer, content)."""
    query = (select(DECISION.c.reviewer, DECISION.c.decision, DECISION.c.edited_question, DECISION.c.edited_answer)
             .where(DECISION.c.candidate_id == candidate_id).order_by(DECISION.c.decision_id))
    return [(reviewer, (decision, question, answer)) for reviewer, decision, question, answer in conn.execute(query)]


def _record(conn: Connection, review: ReviewFile, row: ReviewRow) -> int:
    """Keep one decision row (who, what, file and row); returns its id."""
    return conn.execute(insert(DECISION).values(
        candidate_id=row.candidate_id, corpus_version=row.corpus_version, decision=row.decision.value,
        edited_question=row.edited_question, edited_answer=row.edited_answer, notes=row.notes, reviewer=row.reviewer,
        source_file=Path(review.path).name, source_sha256=review.sha256, source_row=row.row)).inserted_primary_key[0]


def _apply_row(conn: Connection, row: ReviewRow, candidate: Candidate, decision_id: int) -> int:
    """What one recorded decision does to the candidate and its golden item; returns revisions added."""
    conn.execute(update(CANDIDATE).where(CANDIDATE.c.candidate_id == row.candidate_id).values(status=row.decision.value))
    item_id = candidate.origin_item_id or candidate.candidate_id
    state = item_state(conn, item_id)
    if row.decision == Decision.REJECT:
        if state is not None:
            set_status(conn, item_id, "retired" if candidate.origin_item_id else "rejected")
        return 0
    added = 0
    common = {"refs": candidate.relevant_chunks, "corpus_version": candidate.corpus_version,
              "decision_id": decision_id, "question_type": candidate.question_type, "origin": "generated",
              "evidence": _chunk_spans(conn, candidate)}
    if state is not None and state["origin"] == UNREVIEWED_ORIGIN:  # an expert has now seen the trial's item
        set_origin(conn, item_id, REVIEWED_ORIGIN)
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
