"""The simulate-review use case without Dagster, on a three-row queue whose decisions are fixed by the candidate ids:
the first 8 hex digits of sha256(id) / 0xFFFFFFFF are 0.4449 for cand-1 (>= 0.2: accept), 0.1026 for cand-8
(in [0.1, 0.2): edit, the answer cut to its first sentence) and 0.0019 for cand-42 (< 0.1: reject)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rag_assets.app.review_simulation import (
    RUN_REVIEWS, NoReviewQueue, SimulatedReview, expert_review, sample_review_path, simulate_review_queue,
)
from rag_assets.curation.review_writer import write_review_files

QUEUE = [{"candidate_id": f"cand-{n}", "corpus_version": "cv-1", "question": f"Question {n}?",
          "reference_answer": f"Answer {n}. More detail."} for n in (1, 8, 42)]


def _queue(curation: Path, rows: list[dict] = QUEUE) -> None:
    outbox = curation / "outbox"
    outbox.mkdir(parents=True, exist_ok=True)
    write_review_files(rows, outbox / "review-cv-1.csv", outbox / "review-cv-1.jsonl")


def _decided(path: Path) -> list[tuple[str, str, str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [(r["candidate_id"], r["decision"], r["edited_answer"], r["reviewer"]) for r in csv.DictReader(handle)]


def test_each_queued_candidate_is_decided_into_the_sample_review_csv_only(tmp_path: Path):
    _queue(tmp_path / "curation")

    done = simulate_review_queue(tmp_path / "curation", "cv-1")

    assert done == SimulatedReview(3, tmp_path / "curation" / "sample" / "review-cv-1.csv")
    assert done.path == sample_review_path(tmp_path / "curation", "cv-1")
    assert _decided(done.path) == [("cand-1", "accept", "", "simulated-expert"),
                                   ("cand-8", "edit", "Answer 8.", "simulated-expert"),
                                   ("cand-42", "reject", "", "simulated-expert")]
    assert sorted(p.name for p in done.path.parent.iterdir()) == ["review-cv-1.csv"]


def test_a_given_file_is_written_where_asked(tmp_path: Path):
    _queue(tmp_path / "curation")
    done = simulate_review_queue(tmp_path / "curation", "cv-1", tmp_path / "mine" / "decided.csv")
    assert (done.rows, done.path) == (3, tmp_path / "mine" / "decided.csv")
    assert [row[1] for row in _decided(done.path)] == ["accept", "edit", "reject"]
    assert not (tmp_path / "curation" / "sample").exists()


def test_without_a_queue_it_says_which_file_and_how_to_make_it(tmp_path: Path):
    with pytest.raises(NoReviewQueue) as told:
        simulate_review_queue(tmp_path / "curation", "cv-9")
    assert str(told.value) == (f"no review queue {tmp_path / 'curation' / 'outbox' / 'review-cv-9.jsonl'}; "
                               "run `rag-assets run --no-review` first")
    assert not (tmp_path / "curation").exists()


def test_the_expert_review_is_the_sample_one_when_it_reviews_the_stores_candidates(tmp_path: Path):
    _queue(tmp_path)
    sample = simulate_review_queue(tmp_path, "cv-1").path
    assert expert_review(tmp_path, "cv-1", {row["candidate_id"]: "cv-1" for row in QUEUE}) == sample
    assert not (tmp_path / RUN_REVIEWS).exists()


def test_the_expert_reviews_the_queue_when_the_sample_reviews_other_candidates(tmp_path: Path):
    """Claude's candidates, say, while the bundled review decides the offline generator's."""
    _queue(tmp_path)
    simulate_review_queue(tmp_path, "cv-1")
    claudes = [{**row, "candidate_id": f"claude-{n}"} for n, row in enumerate(QUEUE)]
    _queue(tmp_path, claudes)

    done = expert_review(tmp_path, "cv-1", {row["candidate_id"]: "cv-1" for row in claudes})

    assert done == tmp_path / RUN_REVIEWS / "review-cv-1.csv"
    assert [row[0] for row in _decided(done)] == ["claude-0", "claude-1", "claude-2"]


def test_with_nothing_left_in_the_queue_there_is_no_review_to_import(tmp_path: Path):
    """A run after every candidate was decided: a review file without rows would be rejected, failing the run."""
    _queue(tmp_path)
    simulate_review_queue(tmp_path, "cv-1")
    _queue(tmp_path, [])
    assert expert_review(tmp_path, "cv-1", {"claude-0": "cv-1"}) is None
    assert not (tmp_path / RUN_REVIEWS).exists()
