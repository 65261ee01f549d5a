"""Several reviewers on the same candidates: decisions kept side by side, agreement applies,
disagreement is a conflict held for adjudication, and Cohen's kappa is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.curation.agreement import ReviewerAgreement, cohens_kappa
from rag_assets.curation.inbox import import_review_file
from rag_assets.curation.review_file import read_review_file
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.golden_repository import item_state
from tests.curation.test_rejected_files_leave_the_store_unchanged import _csv, world  # noqa: F401  (fixture)


def _review(repo: SqlCurationRepository, folders, name: str, rows: list[dict]):
    folders.inbox.mkdir(parents=True, exist_ok=True)
    path = folders.inbox / name
    path.write_bytes(_csv(rows))
    result = import_review_file(path, folders, repo.candidates.corpus_versions_by_id(), read_review_file,
                                repo.apply_review)
    assert result.status == "applied", result.problems
    return result.summary


def _statuses(engine, ids: list[str]) -> list[str | None]:
    with engine.connect() as conn:
        return [(item_state(conn, i) or {}).get("status") for i in ids]


def test_a_second_reviewer_who_disagrees_makes_a_conflict_not_the_last_word(world):  # noqa: F811
    engine, version, good, folders = world
    repo = SqlCurationRepository(engine)
    rows = good[:4]
    ids = [r["candidate_id"] for r in rows]

    def by(reviewer: str, decisions: str) -> list[dict]:
        names = {"A": "accept", "R": "reject"}
        return [{**row, "decision": names[d], "reviewer": reviewer} for row, d in zip(rows, decisions)]

    _review(repo, folders, "ana.csv", by("ana", "AARA"))
    second = _review(repo, folders, "bob.csv", by("bob", "ARRR"))

    assert (second["agreements"], second["conflicts"], second["accepted"], second["rejected"]) == (2, 2, 0, 0)
    assert _statuses(engine, ids) == ["accepted", "accepted", None, "accepted"], "the golden set is left as it was"
    conflicts = repo.conflicts(version)
    assert [(c.candidate_id, c.decisions) for c in conflicts] == [
        (ids[i], {"ana": ("accept", None, None), "bob": ("reject", None, None)}) for i in sorted((1, 3), key=ids.__getitem__)]
    assert len(repo.decisions(ids[1])) == 2, "both decisions are kept"
    # ana AARA vs bob ARRR: p_o = 2/4, p_e = (3*1 + 1*3)/16 = 0.375, kappa = 0.125 / 0.625 = 0.2
    assert repo.reviewer_agreement(version) == [ReviewerAgreement("ana", "bob", 4, 0.5, pytest.approx(0.2))]

    settled = _review(repo, folders, "eve.csv", [{**rows[1], "decision": "reject", "reviewer": "adjudicator:eve"}])
    assert settled["rejected"] == 1 and _statuses(engine, [ids[1]]) == ["rejected"]
    agreed = _review(repo, folders, "ana-2.csv", [{**rows[3], "decision": "reject", "reviewer": "ana"}])
    assert agreed["rejected"] == 1 and _statuses(engine, [ids[3]]) == ["rejected"]
    assert repo.conflicts(version) == []
    assert repo.reviewer_agreement(version) == [ReviewerAgreement("ana", "bob", 4, 0.75, pytest.approx(0.5))]


def test_two_reviewers_in_one_file_are_both_kept(world):  # noqa: F811
    engine, version, good, folders = world
    repo = SqlCurationRepository(engine)
    row = good[0]
    summary = _review(repo, folders, "both.csv", [{**row, "decision": "accept", "reviewer": "ana"},
                                                  {**row, "decision": "reject", "reviewer": "bob"}])
    assert (summary["accepted"], summary["conflicts"]) == (1, 1)
    assert [c.candidate_id for c in repo.conflicts(version)] == [row["candidate_id"]]


def test_cohens_kappa_by_hand():
    # 10 items; a: 6 yes 4 no; b: 5 yes 5 no; agree on 7 -> p_o 0.7, p_e (6*5 + 4*5)/100 = 0.5, kappa 0.4
    a = ["y"] * 6 + ["n"] * 4
    b = ["y", "y", "y", "y", "n", "n", "y", "n", "n", "n"]
    assert sum(x == y for x, y in zip(a, b)) == 7
    assert cohens_kappa(a, b) == pytest.approx(0.4)
    assert cohens_kappa(["y", "y"], ["y", "y"]) is None
    assert cohens_kappa([], []) is None
