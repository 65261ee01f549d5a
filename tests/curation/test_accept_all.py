"""Trial mode in the store: every pending candidate becomes a golden item labelled unreviewed, once; the
candidates stay pending; an expert's later decision is an ordinary first decision (no conflict with the trial)."""

from __future__ import annotations

from rag_assets.corpus.models import ChunkRef
from rag_assets.curation.accept_all import trial_candidates
from rag_assets.golden.models import UNREVIEWED_ORIGIN
from rag_assets.generation.models import Candidate
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.golden_repository import item_state
from tests.curation.test_rejected_files_leave_the_store_unchanged import world  # noqa: F401  (fixture)
from tests.curation.test_several_reviewers import _review

CHUNK = (ChunkRef("c-1", "h-1"),)


def _candidate(candidate_id: str, question_type: str = "factual", relevant=CHUNK, origin_item_id=None) -> Candidate:
    return Candidate(candidate_id, "What is the limit?", "Ten.", question_type, relevant, CHUNK, "cv-1", "offline",
                     "offline", "p", origin_item_id=origin_item_id)


def test_a_trial_takes_new_questions_with_evidence_and_leaves_re_reviews_to_a_person():
    kept = trial_candidates([
        _candidate("q-new"), _candidate("q-adversarial", "adversarial", relevant=()),
        _candidate("q-no-evidence", relevant=()), _candidate("q-rereview", origin_item_id="q-old")])
    assert [c.candidate_id for c in kept] == ["q-new", "q-adversarial"]


def test_accepted_unreviewed_once_then_an_experts_decisions_apply_without_conflict(world):  # noqa: F811
    engine, version, good, folders = world
    repo = SqlCurationRepository(engine)
    pending = repo.candidates.for_version(version, status="pending")
    assert repo.accept_unreviewed(pending) == len(pending) == len(good)
    assert repo.accept_unreviewed(pending) == 0, "idempotent"
    with engine.connect() as conn:
        states = [item_state(conn, c.candidate_id) for c in pending]
    assert {(s["origin"], s["status"], s["current_revision"]) for s in states} == {(UNREVIEWED_ORIGIN, "accepted", 1)}
    assert len(repo.candidates.for_version(version, status="pending")) == len(pending), "still waiting for an expert"
    assert repo.decisions() == [], "no decision is recorded in an expert's name"

    first, second, third = good[:3]
    edited = {**third, "decision": "edit", "edited_answer": "Twelve, since 2.0."}
    summary = _review(repo, folders, "ana.csv", [first, {**second, "decision": "reject"}, edited])
    assert (summary["accepted"], summary["rejected"], summary["edited"], summary["conflicts"]) == (1, 1, 1, 0)
    with engine.connect() as conn:
        after = [dict(item_state(conn, r["candidate_id"])) for r in (first, second, third)]
    assert [(s["origin"], s["status"], s["current_revision"]) for s in after] == [
        ("generated", "accepted", 1), (UNREVIEWED_ORIGIN, "rejected", 1), ("generated", "accepted", 2)]
    left = repo.candidates.for_version(version, status="pending")
    assert len(left) == len(pending) - 3 and repo.accept_unreviewed(left) == 0
