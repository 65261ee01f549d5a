"""The human half of the lifecycle through Dagster: queue file, expert edits, inbox sensor, golden versions."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import openpyxl
import pytest

from rag_assets.app.status import store_status
from rag_assets.cli.summary import run_state, with_pending_review
from rag_assets.defs.resources import RESOURCES
from rag_assets.settings import Settings
from rag_assets.store.engine import get_engine
from rag_assets.store.golden_repository import SqlGoldenRepository
from tests.conftest import SharedCheckout
from tests.defs.lifecycle import (
    LifecycleRun, current_version, data_version, golden_export, inbox_tick, metadata, outbox_rows, review_as_expert,
    run_job, run_sensor_requests,
)


def _first_lifecycle(home: Path) -> LifecycleRun:
    """The lifecycle job's first run on a fresh checkout of the sample, before anybody reviewed (candidates queued,
    no golden set), in an instance kept in the checkout."""
    version = current_version()
    instance_dir = home.parent / "dagster"
    instance_dir.mkdir()
    with dg.instance_for_test(temp_dir=str(instance_dir)) as instance:
        result = run_job(instance, "lifecycle", version)
    return LifecycleRun(version, result, instance_dir)


def _every_candidate_accepted(home: Path) -> tuple[LifecycleRun, list[dict]]:
    """The first run, then golden version 1 with every candidate accepted (a review file the inbox sensor imports);
    the first run and the golden set's items as exported."""
    first = _first_lifecycle(home)
    with first.instance() as instance:
        review_as_expert(first.version, f"review-{first.version}.csv",
                         lambda i, row: {"decision": "accept", "reviewer": "ana"})
        run_sensor_requests(instance, inbox_tick(instance))
    return first, golden_export(first.version, 1)


@pytest.fixture(scope="module")
def unreviewed_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """``_first_lifecycle``, once per module (most tests here go on from it)."""
    return SharedCheckout(tmp_path_factory.mktemp("unreviewed"), _first_lifecycle, curation_sample=False)


@pytest.fixture
def unreviewed(unreviewed_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> SharedCheckout:
    """The checkout as the lifecycle's first run left it, whatever an earlier test did to it; ``made`` is that
    run. The environment points at it as ``project_env`` does."""
    unreviewed_checkout.use(monkeypatch)
    return unreviewed_checkout


@pytest.fixture(scope="module")
def accepted_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """``_every_candidate_accepted``, once per module (the tests that change a document go on from it)."""
    return SharedCheckout(tmp_path_factory.mktemp("accepted"), _every_candidate_accepted, curation_sample=False)


@pytest.fixture
def every_candidate_accepted(accepted_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> SharedCheckout:
    """The checkout with golden version 1 of every candidate accepted, whatever an earlier test did to it; ``made``
    is (the first run, the golden items as exported)."""
    accepted_checkout.use(monkeypatch)
    return accepted_checkout


def _first_review(index: int, row: dict) -> dict | None:
    """Accept most, reject every 7th, edit every 5th (answer: prefixed, so the chunks still support it), leave
    the last five undecided."""
    if index >= 40:
        return None
    if index % 7 == 3:
        return {"decision": "reject", "reviewer": "ana", "notes": "ambiguous"}
    if index % 5 == 1:
        return {"decision": "edit", "edited_answer": f"Edited answer: {row['reference_answer']}", "reviewer": "ben"}
    return {"decision": "Accept ", "reviewer": "ana"}


def _golden(home: Path) -> SqlGoldenRepository:
    return SqlGoldenRepository(get_engine(f"sqlite:///{home / 'rag_assets.db'}"))


def test_round_trip_from_queue_file_to_two_golden_versions(unreviewed: SharedCheckout):
    first_run = unreviewed.made.result  # the first run: nobody reviewed yet, no golden set, nothing fails
    version = unreviewed.made.version
    with unreviewed.made.instance() as instance:
        assert "golden_set" not in {e.asset_key.to_user_string() for e in first_run.get_asset_materialization_events()}
        rows = outbox_rows(version)
        assert len(rows) == metadata(first_run, "question_candidates")["candidates"]
        assert rows[0]["decision"] == "" and rows[0]["chunk_excerpt"].startswith("[")
        workbook = openpyxl.load_workbook(metadata(first_run, "curation_queue")["review_workbook"])["Review"]
        assert [c.value for c in workbook["A"][1:]] == [r["candidate_id"] for r in rows]

        review_as_expert(version, f"review-{version}-ana.csv", _first_review)
        tick = inbox_tick(instance)
        assert [r.partition_key for r in tick.run_requests] == [version]
        (imported,) = run_sensor_requests(instance, tick)
        decided = rows[:40]
        rejected = {r["candidate_id"] for i, r in enumerate(decided) if i % 7 == 3}
        edited = {r["candidate_id"] for i, r in enumerate(decided) if i % 7 != 3 and i % 5 == 1}
        accepted = {r["candidate_id"] for r in decided} - rejected
        golden_meta = metadata(imported, "golden_set")
        assert golden_meta["golden_version"] == 1 and golden_meta["items"] == len(accepted)
        items = {i["item_id"]: i for i in golden_export(version, 1)}
        assert set(items) == accepted
        assert all(items[i]["reference_answer"].startswith("Edited answer") and items[i]["revision"] == 2 for i in edited)
        assert all(items[i]["revision"] == 1 for i in accepted - edited)
        assert inbox_tick(instance, tick.cursor).run_requests == [], "a file is imported once"
        assert list((Settings.from_env().curation_root / "processed").iterdir())

        first = {r["candidate_id"]: r for r in decided}
        later = sorted(accepted - edited)
        sharper = first[later[1]]["question"].rstrip("?") + ", exactly?"  # on the same topic: retrieval still finds it
        second = {later[0]: {"decision": "reject", "reviewer": "ana"},
                  later[1]: {"decision": "edit", "edited_question": sharper, "reviewer": "ana"},
                  rows[40]["candidate_id"]: {"decision": "accept", "reviewer": "ben"}}
        review_as_expert(version, f"review-{version}-second.csv", lambda i, row: second.get(row["candidate_id"]))
        (again,) = run_sensor_requests(instance, inbox_tick(instance, tick.cursor))
        meta = metadata(again, "golden_set")
        assert (meta["golden_version"], meta["parent_version"]) == (2, 1)
        assert (meta["added"], meta["removed"], meta["changed"], meta["stale_new"]) == (1, 1, 1, 0)
        assert f"| {later[0]} | removed |" in meta["diff"] and f"| {later[1]} | changed |" in meta["diff"]
        assert f"| {rows[40]['candidate_id']} | added |" in meta["diff"]
        revisions = _golden(unreviewed.home).revisions(later[1])
        assert [(r.revision, r.question) for r in revisions] == [(1, first[later[1]]["question"]), (2, sharper)]


def test_changing_one_document_repins_untouched_items_and_marks_exactly_the_affected_ones_stale(
        every_candidate_accepted: SharedCheckout):
    (first, items), home = every_candidate_accepted.made, every_candidate_accepted.home
    version = first.version
    with first.instance() as instance:
        chunk_text = {c.chunk_id: c for c in _corpus(home).snapshot_chunks(version)}
        target = next(i for i in items if i["question_type"] == "factual")
        chunk = chunk_text[target["relevant_chunks"][0]["chunk_id"]]
        document = every_candidate_accepted.corpus / chunk.path
        sentence = chunk.text.split("\n")[-1]
        assert document.read_text().count(sentence) == 1
        edited = sentence.replace(" ", " (This sentence is new.) ", 1)
        document.write_text(document.read_text().replace(sentence, edited))
        affected = {i["item_id"] for i in items
                    if any(r["chunk_id"] == chunk.chunk_id for r in i["relevant_chunks"])}

        new_version = current_version()
        assert new_version != version
        rerun = run_job(instance, "lifecycle", new_version)
        assert metadata(rerun, "question_candidates")["requeued_stale_items"] == len(affected)
        meta = metadata(rerun, "golden_set")
        assert meta["stale_new"] == len(affected) and meta["items"] == len(items) - len(affected)
        assert (meta["removed"], meta["added"], meta["changed"]) == (0, 0, 0)
        pinned = golden_export(new_version, meta["golden_version"])
        assert {i["corpus_version"] for i in pinned} == {new_version}
        assert {i["item_id"] for i in pinned} == {i["item_id"] for i in items} - affected
        requeued = [r for r in outbox_rows(new_version) if r["chunk_excerpt"].startswith("RE-REVIEW")]
        assert len(requeued) == len(affected)
        was, now = requeued[0]["chunk_excerpt"].split("WAS: ")[1].split("NOW: ")
        assert "(This sentence is new.)" in now, "the expert sees the changed text"
        assert "(This sentence is new.)" not in was and " ".join(sentence.split()) in was, "and what it said before"

        review_as_expert(new_version, f"review-{new_version}.csv",
                         lambda i, row: {"decision": "accept", "reviewer": "ana"} if row["chunk_excerpt"].startswith("RE-REVIEW") else None)
        (confirmed,) = run_sensor_requests(instance, inbox_tick(instance, None))
        meta = metadata(confirmed, "golden_set")
        # against its parent (the version without the stale items) they come back as added, at a new revision
        assert meta["items"] == len(items) and meta["added"] == len(affected) and meta["stale_new"] == 0
        revised = _golden(home).revisions(sorted(affected)[0])
        assert [r.corpus_version for r in revised] == [version, new_version]


def _corpus(home: Path):
    from rag_assets.store.corpus_repository import SqlCorpusRepository

    return SqlCorpusRepository(get_engine(f"sqlite:///{home / 'rag_assets.db'}"))


def test_a_paragraph_added_at_the_top_of_a_document_repins_its_items_and_makes_none_stale(
        every_candidate_accepted: SharedCheckout):
    (first, items), home = every_candidate_accepted.made, every_candidate_accepted.home
    version = first.version
    with first.instance() as instance:
        chunks = {c.chunk_id: c for c in _corpus(home).snapshot_chunks(version)}
        path = chunks[next(i for i in items if i["relevant_chunks"])["relevant_chunks"][0]["chunk_id"]].path
        document = every_candidate_accepted.corpus / path
        document.write_text("An added opening paragraph, which shifts every offset after it.\n\n" + document.read_text())
        on_document = {i["item_id"] for i in items if any(chunks[r["chunk_id"]].path == path for r in i["relevant_chunks"])}

        new_version = current_version()
        meta = metadata(run_job(instance, "lifecycle", new_version), "golden_set")
        assert (meta["stale_new"], meta["items"], meta["removed"], meta["changed"]) == (0, len(items), 0, 0)
        assert meta["repinned"] == len(on_document), "every item on the document moved down, none went stale"
        body = _corpus(home).documents(new_version, [path])[path].body
        moved = [i for i in golden_export(new_version, meta["golden_version"]) if i["item_id"] in on_document and i["evidence"]]
        assert len(moved) == meta["repinned"]
        for item in moved:
            old = chunks[next(r for r in items if r["item_id"] == item["item_id"])["relevant_chunks"][0]["chunk_id"]]
            span = item["evidence"][0]
            assert body[span["start"]:span["end"]] == old.text and span["start"] > old.start
        assert not [r for r in outbox_rows(new_version) if r["chunk_excerpt"].startswith("RE-REVIEW")]


def test_a_file_naming_an_unknown_corpus_version_is_rejected_by_the_sensor_with_a_report(project_env: Path):
    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "review-cv-0123456789ab.csv").write_text("candidate_id,corpus_version\n")
    with dg.instance_for_test() as instance:
        result = inbox_tick(instance)
    assert result.run_requests == []
    report = Settings.from_env().curation_root / "rejected" / "review-cv-0123456789ab.csv.errors.txt"
    assert "file, corpus_version: names corpus version 'cv-0123456789ab', which has no partition" in report.read_text()
    assert not os.listdir(inbox)


def test_two_reviewers_who_disagree_leave_conflicts_in_the_queue_and_a_kappa_in_metadata(unreviewed: SharedCheckout):
    version = unreviewed.made.version
    with unreviewed.made.instance() as instance:
        names = {"A": "accept", "R": "reject"}
        for reviewer, decisions in (("ana", "AARA"), ("bob", "ARRR")):
            review_as_expert(version, f"review-{version}-{reviewer}.csv", lambda i, row, r=reviewer, d=decisions: (
                {"decision": names[d[i]], "reviewer": r} if i < len(d) else None))
        files = [f"review-{version}-ana.csv", f"review-{version}-bob.csv"]
        imported = run_job(instance, "curation_import", version,
                           {"ops": {"curated_decisions": {"config": {"files": files}}}})
        meta = metadata(imported, "curated_decisions")
        # p_o = 2/4, p_e = (3*1 + 1*3)/16 = 0.375: kappa = 0.125 / 0.625
        assert (meta["conflicts"], meta["cohens_kappa"]) == (2, 0.2)
        assert "| ana | bob | 4 | 0.500 | 0.200 |" in meta["reviewer_agreement"]
        queued = run_job(instance, "lifecycle", version)
        assert metadata(queued, "curation_queue")["conflicts"] == 2
    notes = [row["chunk_excerpt"] for row in outbox_rows(version) if row["chunk_excerpt"].startswith("CONFLICT")]
    assert notes and all("ana: accept; bob: reject" in note for note in notes) and len(notes) == 2


def test_conflicts_wait_for_a_person_alike_in_the_queue_the_run_summary_and_status(unreviewed: SharedCheckout):
    """Two reviewers who disagree on every candidate leave none pending but all of them in conflict, listed in the
    review file for adjudication: the queue's ``pending``, the run summary's and ``rag-assets status`` count them
    all (status and summary counted the pending candidates alone: 0, and the CLI said nothing was left to review)."""
    version = unreviewed.made.version
    with unreviewed.made.instance() as instance:
        listed = len(outbox_rows(version))
        files = []
        for reviewer, decision in (("ana", "accept"), ("bob", "reject")):
            review_as_expert(version, f"review-{version}-{reviewer}.csv",
                             lambda i, row, r=reviewer, d=decision: {"decision": d, "reviewer": r})
            files.append(f"review-{version}-{reviewer}.csv")
        run_job(instance, "curation_import", version, {"ops": {"curated_decisions": {"config": {"files": files}}}})
        queued = run_job(instance, "lifecycle", version)
        summary = with_pending_review(run_state(instance, [queued.run_id], []), RESOURCES["store"])
    recorded = metadata(queued, "curation_queue")
    assert recorded["conflicts"] == listed == len(outbox_rows(version)) > 0
    (shown,) = [s.materialization for s in summary.materializations if s.materialization.asset_key.path[-1] == "curation_queue"]
    status = store_status(RESOURCES["store"], Settings.from_env().curation_root, version)
    assert recorded["pending"] == shown.metadata["pending"].value == listed
    assert [line.split(" candidate questions of ")[0] for line in status.waiting] == [str(listed)]


def test_a_trial_import_gives_curated_decisions_a_new_data_version_once(unreviewed: SharedCheckout):
    """``--accept-all`` changes what the golden set is built from without any review file, so the data version
    Dagster compares for staleness must change with it; running the trial again changes nothing."""
    version = unreviewed.made.version
    trial = {"ops": {"curated_decisions": {"config": {"accept_all": True}}}}
    before = data_version(unreviewed.made.result, "curated_decisions")  # the first run's, nobody having reviewed
    with unreviewed.made.instance() as instance:
        tried = run_job(instance, "lifecycle", version, run_config=trial)
        again = run_job(instance, "lifecycle", version, run_config=trial)
    assert metadata(tried, "curated_decisions")["accepted_unreviewed"] > 0
    assert before != data_version(tried, "curated_decisions") == data_version(again, "curated_decisions")
