"""The export use case without Dagster: two imported items built into golden version 1 in SQLite, then written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.app.golden_export import NoGoldenVersion, export_golden_version
from rag_assets.app.golden_import import import_golden_file
from rag_assets.golden.build import build_golden, diff_golden
from rag_assets.golden.repin import PinTarget
from tests.app.conftest import LIMITS, ROTATE, ROWS, SqliteStore, write_ragas


@pytest.fixture
def version_one(snapshotted: tuple[SqliteStore, str], tmp_path: Path) -> tuple[SqliteStore, str]:
    """Golden version 1: the two ragas items, imported and built."""
    store, version = snapshotted
    import_golden_file(store, write_ragas(tmp_path / "team.jsonl", ROWS), "ragas", None, lambda: version)
    golden = store.golden()
    build = build_golden(PinTarget(version, store.corpus().snapshot_chunks(version), store.corpus()),
                         golden.accepted_items([version]))
    golden.save_version(build, None, diff_golden((), build))
    return store, version


def test_the_newest_version_is_written_as_jsonl_one_row_per_item(version_one: tuple[SqliteStore, str],
                                                                 tmp_path: Path):
    store, version = version_one

    done = export_golden_version(store, "jsonl", out=tmp_path / "out" / "golden.jsonl")

    assert (done.version.number, done.version.corpus_version, done.items) == (1, version, 2)
    assert done.path == tmp_path / "out" / "golden.jsonl"
    rows = [json.loads(line) for line in done.path.read_text(encoding="utf-8").splitlines()]
    assert [(r["item_id"], r["revision"], r["question"], r["reference_answer"], r["corpus_version"], r["origin"])
            for r in rows] == [
        ("ragas:limit", 1, "What is the rate limit?", "50 requests per minute per key.", version, "imported:ragas"),
        ("ragas:rotate", 1, "How do I rotate a key?", "Create a new key, then delete the old one.", version,
         "imported:ragas")]
    assert [len(r["relevant_chunks"]) for r in rows] == [1, 1]


def test_the_ragas_format_carries_each_items_evidence_text(version_one: tuple[SqliteStore, str], tmp_path: Path):
    store, _ = version_one

    done = export_golden_version(store, "ragas", 1, tmp_path / "golden.ragas.jsonl")

    rows = [json.loads(line) for line in done.path.read_text(encoding="utf-8").splitlines()]
    assert [(r["user_input"], r["reference_contexts"]) for r in rows] == [
        ("What is the rate limit?", [LIMITS]), ("How do I rotate a key?", [ROTATE])]


def test_an_unknown_version_names_the_versions_there_are_and_writes_nothing(version_one: tuple[SqliteStore, str],
                                                                            tmp_path: Path):
    store, _ = version_one
    with pytest.raises(NoGoldenVersion) as told:
        export_golden_version(store, "jsonl", 7, tmp_path / "g.jsonl")
    assert str(told.value) == f"no golden-set version 7 in {store.describe()} (versions: 1)"
    assert not (tmp_path / "g.jsonl").exists()


def test_a_store_not_made_yet_has_no_version_and_stays_unmade(store: SqliteStore):
    with pytest.raises(NoGoldenVersion, match=r"^no golden-set version in sqlite:///.*store\.db "
                                              r"\(no version yet; run `rag-assets run`\)$"):
        export_golden_version(store, "csv")
    assert not store.made()
