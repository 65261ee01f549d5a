"""The import-golden use case without Dagster: a ragas file of two items over a two-document corpus, in SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.app.golden_import import ImportImpossible, ItemsNotLocated, import_golden_file
from rag_assets.golden.importers import ExternalDataError, content_id
from rag_assets.golden.models import Replaced
from tests.app.conftest import ROWS, SqliteStore, write_ragas


def _never() -> str:
    raise AssertionError("the version is planned only once the store holds a snapshot")


def test_a_two_item_ragas_file_pins_both_items_as_accepted_and_a_second_import_adds_none(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, version = snapshotted
    team = write_ragas(tmp_path / "team.jsonl", ROWS)

    done = import_golden_file(store, team, "ragas", None, lambda: version)

    assert (done.corpus_version, done.read, done.new, done.unmapped) == (version, 2, 2, ())
    assert done.item_ids == ["ragas:limit", "ragas:rotate"]
    paths = {c.chunk_id: c.path for c in store.corpus().snapshot_chunks(version)}
    assert [[paths[r.chunk_id] for r in p.refs] for p in done.pinned] == [["limits.md"], ["keys.md"]]
    accepted = store.golden().accepted_items([version])
    assert sorted(i.item_id for i in accepted) == ["ragas:limit", "ragas:rotate"]
    assert {i.item_id: i.question for i in accepted}["ragas:rotate"] == "How do I rotate a key?"

    again = import_golden_file(store, team, "ragas", None, lambda: version)
    assert (again.read, len(again.pinned), again.new) == (2, 2, 0)


#: An item answered by no document of ``corpus_dir``.
BILLING = {**ROWS[1], "id": "billing", "reference_contexts": ["Invoices are sent on the first day of each month."]}


def test_an_item_whose_context_is_not_in_the_corpus_imports_nothing_and_names_file_row_and_field(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, version = snapshotted
    team = write_ragas(tmp_path / "team.jsonl", [ROWS[0], BILLING, ROWS[1]])

    with pytest.raises(ItemsNotLocated) as told:
        import_golden_file(store, team, "ragas", None, lambda: version)

    assert str(told.value) == (
        f"{team}: 1 of 3 items could not be located in corpus version {version}; first: row 2 (line 2): "
        "reference_contexts[0] is not in any document ('Invoices are sent on the first day of each month.'); "
        "nothing imported; re-run with --skip-unlocated to import the 2 others")
    assert isinstance(told.value, ExternalDataError), "bad input: the CLI's exit 2"
    assert [item.external_id for item, _ in told.value.unlocated] == ["billing"]
    assert store.golden().accepted_items([version]) == []


def test_when_no_item_can_be_located_there_is_nothing_to_skip_to(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, version = snapshotted
    team = write_ragas(tmp_path / "team.jsonl", [BILLING])

    with pytest.raises(ItemsNotLocated) as told:
        import_golden_file(store, team, "ragas", None, lambda: version)

    assert str(told.value) == (
        f"{team}: 1 of 1 item could not be located in corpus version {version}; first: row 1 (line 1): "
        "reference_contexts[0] is not in any document ('Invoices are sent on the first day of each month.'); "
        "nothing imported")


def test_with_skip_unlocated_an_item_whose_context_is_not_in_the_corpus_is_left_out_with_why(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, version = snapshotted

    done = import_golden_file(store, write_ragas(tmp_path / "team.jsonl", [ROWS[0], BILLING]), "ragas", None,
                              lambda: version, skip_unlocated=True)

    assert (done.read, done.item_ids, done.new) == (2, ["ragas:limit"], 1)
    assert [(item.external_id, reason.split(" (")[0]) for item, reason in done.unmapped] == [
        ("billing", "reference_contexts[0] is not in any document")]
    assert [i.item_id for i in store.golden().accepted_items([version])] == ["ragas:limit"]


def test_without_a_store_the_bad_file_is_told_first_then_the_missing_snapshot_and_no_store_is_made(
        store: SqliteStore, tmp_path: Path):
    bad = write_ragas(tmp_path / "bad.jsonl", [{"user_input": "Q?", "reference": "A."}])
    with pytest.raises(ExternalDataError, match=r"bad.jsonl: row 1: field 'reference_contexts' is missing"):
        import_golden_file(store, bad, "ragas", None, _never)
    with pytest.raises(ImportImpossible) as told:
        import_golden_file(store, write_ragas(tmp_path / "team.jsonl", ROWS), "ragas", None, _never)
    assert str(told.value) == f"sqlite:///{tmp_path / 'store.db'} holds no corpus snapshot yet; run `rag-assets run` first"
    assert not store.made()


def test_a_corpus_version_without_a_snapshot_is_refused_before_anything_is_imported(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, _ = snapshotted
    with pytest.raises(ImportImpossible, match=r"^corpus version cv-none has no snapshot yet; run `rag-assets run` first$"):
        import_golden_file(store, write_ragas(tmp_path / "team.jsonl", ROWS), "ragas", None, lambda: "cv-none")
    assert store.golden().accepted_items(["cv-none"]) == []


def test_an_anthropic_docs_dataset_without_its_chunks_file_is_refused_before_the_store_is_read(
        store: SqliteStore, tmp_path: Path):
    dataset = tmp_path / "docs_evaluation_dataset.json"
    dataset.write_text("[]", encoding="utf-8")
    with pytest.raises(ImportImpossible) as told:
        import_golden_file(store, dataset, "anthropic_docs", None, _never)
    assert str(told.value) == (f"{dataset}: an anthropic_docs dataset is read with its corpus chunks JSON; "
                               "for example chunks=Path('anthropic_docs.json')")
    assert not store.made()


def test_a_question_imported_again_with_another_reference_replaces_the_reference_by_a_new_revision(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    """A row without an id (its id a hash of question and reference) is matched by question (whitespace collapsed)
    among the accepted items imported from ragas files without an id, whatever the file's name: the item gets
    revision 2, recorded as an edit decision of the import; revision 1 is kept for the golden-set versions that
    hold it."""
    store, version = snapshotted
    unnamed = [{**row, "id": ""} for row in ROWS]
    import_golden_file(store, write_ragas(tmp_path / "team.jsonl", unnamed), "ragas", None, lambda: version)
    limit, rotate = (f"ragas:{content_id('ragas', r['user_input'], r['reference'])}" for r in ROWS)
    corrected = {**unnamed[0], "user_input": " What is the  rate limit?", "reference": "60 requests a minute."}
    fixed = write_ragas(tmp_path / "fixed.jsonl", [corrected, unnamed[1]])

    done = import_golden_file(store, fixed, "ragas", None, lambda: version)

    assert (done.read, done.new) == (2, 0), "the same question and reference is nothing new"
    assert done.replaced == (Replaced(limit, "row 1 (line 1)", "50 requests per minute per key.",
                                      "60 requests a minute.", 2),)
    assert [(i.revision, i.question, i.reference_answer) for i in store.golden().revisions(limit)] == [
        (1, "What is the rate limit?", "50 requests per minute per key."),
        (2, " What is the  rate limit?", "60 requests a minute.")]
    assert sorted(i.item_id for i in store.golden().accepted_items([version])) == sorted([limit, rotate])
    (edit,) = [d for d in store.curation().decisions(limit) if d["decision"] == "edit"]
    assert (edit["reviewer"], edit["source_file"], edit["edited_answer"]) == (
        "import:ragas", "fixed.jsonl", "60 requests a minute.")
    again = import_golden_file(store, fixed, "ragas", None, lambda: version)
    assert (again.new, again.replaced) == (0, ()), "the same file again changes nothing"
    named = import_golden_file(store, write_ragas(tmp_path / "named.jsonl", [{**corrected, "id": "limit-2"}]),
                               "ragas", None, lambda: version)
    assert (named.new, named.replaced) == (1, ()), "a row with an id of its own is that id's item"


def test_a_row_without_an_id_never_replaces_the_reference_of_an_item_the_team_named(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    """An item with an id of its own is that id's item only: a later row without an id asking its question with
    another reference is an item of its own, and the named item keeps its reference and its one revision."""
    store, version = snapshotted
    import_golden_file(store, write_ragas(tmp_path / "team.jsonl", ROWS[:1]), "ragas", None, lambda: version)
    other = {**ROWS[0], "id": "", "reference": "60 requests a minute."}

    done = import_golden_file(store, write_ragas(tmp_path / "other.jsonl", [other]), "ragas", None, lambda: version)

    assert (done.new, done.replaced) == (1, ())
    assert [(i.revision, i.reference_answer) for i in store.golden().revisions("ragas:limit")] == [
        (1, "50 requests per minute per key.")]
    assert not [d for d in store.curation().decisions("ragas:limit") if d["decision"] == "edit"]
    derived = f"ragas:{content_id('ragas', ROWS[0]['user_input'], '60 requests a minute.')}"
    assert sorted(i.item_id for i in store.golden().accepted_items([version])) == sorted(["ragas:limit", derived])


#: A question the two documents cannot answer, as the ragas export writes an adversarial item: no reference contexts,
#: its type in ``question_type`` and in ``synthesizer_name``.
MOON = {"id": "moon", "user_input": "What does the moon cost?", "reference": "The documentation does not say.",
        "reference_contexts": [], "synthesizer_name": "rag_assets_adversarial", "question_type": "adversarial"}


def test_an_item_without_contexts_its_file_marks_adversarial_is_imported_as_one_with_no_evidence(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, version = snapshotted

    done = import_golden_file(store, write_ragas(tmp_path / "team.jsonl", [ROWS[0], MOON, ROWS[1]]), "ragas", None,
                              lambda: version)

    assert (done.read, done.new, done.unmapped) == (3, 3, ())
    assert [(i.item_id, i.question_type, i.relevant_chunks, i.evidence)
            for i in store.golden().accepted_items([version]) if i.item_id == "ragas:moon"] == [
        ("ragas:moon", "adversarial", (), ())]


def test_an_item_without_contexts_nothing_marks_unanswerable_imports_nothing_naming_its_row(
        snapshotted: tuple[SqliteStore, str], tmp_path: Path):
    store, version = snapshotted
    unmarked = {k: v for k, v in MOON.items() if k not in ("synthesizer_name", "question_type")}
    team = write_ragas(tmp_path / "team.jsonl", [ROWS[0], {**MOON, "id": "moon-2"}, unmarked])

    with pytest.raises(ItemsNotLocated) as told:
        import_golden_file(store, team, "ragas", None, lambda: version)

    assert str(told.value) == (
        f"{team}: 1 of 3 items could not be located in corpus version {version}; first: row 3 (line 3): "
        "has no reference contexts to locate (mark it question_type: adversarial if nothing in the corpus answers it); "
        "nothing imported; re-run with --skip-unlocated to import the 2 others")
    assert store.golden().accepted_items([version]) == []
