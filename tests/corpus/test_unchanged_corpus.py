"""An unchanged corpus is decided from the stat walk: path, size and mtime_ns, no file opened."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest
from sqlalchemy import select, update

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.errors import CorpusError
from rag_assets.store.corpus_repository import SNAPSHOT, SqlCorpusRepository
from rag_assets.store.engine import get_engine, write_transaction

CONFIG = ChunkerConfig(target_chars=300, overlap_chars=50, min_chars=80)


@pytest.fixture
def repo(store_url: str) -> SqlCorpusRepository:
    return SqlCorpusRepository(get_engine(store_url))


def _swap_content_keeping_stat(path: Path) -> None:
    """New bytes of the same length with the old mtime: only a reader could tell."""
    stat = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.swapcase() if data.swapcase() != data else data[::-1])
    assert path.read_bytes() != data
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    path.chmod(0)


def test_an_unchanged_stat_walk_returns_the_last_snapshot_without_opening_a_file(
    sample_corpus: Path, repo: SqlCorpusRepository
):
    first = snapshot_corpus(sample_corpus, CONFIG, repo)
    rows = repo.row_counts()
    files = sorted(p for p in sample_corpus.rglob("*") if p.is_file())
    for path in files:
        _swap_content_keeping_stat(path)
    try:
        second = snapshot_corpus(sample_corpus, CONFIG, repo)
    finally:
        for path in files:
            path.chmod(0o644)
    assert (second.version_id, second.created, second.files_read) == (first.version_id, False, 0)
    assert repo.row_counts() == rows


def test_a_touched_file_with_the_same_content_keeps_the_version_and_is_then_trusted(
    sample_corpus: Path, repo: SqlCorpusRepository
):
    first = snapshot_corpus(sample_corpus, CONFIG, repo)
    touched = sorted(sample_corpus.rglob("*.md"))[0]
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 7_000_000_000))
    second = snapshot_corpus(sample_corpus, CONFIG, repo)
    assert (second.version_id, second.created, second.files_read) == (first.version_id, False, 1)
    _swap_content_keeping_stat(touched)
    try:
        third = snapshot_corpus(sample_corpus, CONFIG, repo)
    finally:
        touched.chmod(0o644)
    assert (third.version_id, third.files_read) == (first.version_id, 0), "the new mtime was recorded"


def test_a_changed_size_is_read_and_makes_a_new_version(sample_corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(sample_corpus, CONFIG, repo)
    changed = sorted(sample_corpus.rglob("*.md"))[0]
    stat = changed.stat()
    changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    os.utime(changed, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = snapshot_corpus(sample_corpus, CONFIG, repo)
    assert second.created and second.version_id != first.version_id and second.files_read == 1


def test_the_partition_guard_holds_on_the_unchanged_path(sample_corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(sample_corpus, CONFIG, repo)
    with pytest.raises(CorpusError, match=rf"is now version {first.version_id}, not cv-000000000000"):
        snapshot_corpus(sample_corpus, CONFIG, repo, expected_version="cv-000000000000")
    again = snapshot_corpus(sample_corpus, CONFIG, repo, expected_version=first.version_id)
    assert (again.version_id, again.files_read) == (first.version_id, 0)


def test_a_diff_stored_in_the_older_keyed_format_reads_back_the_same(sample_corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(sample_corpus, CONFIG, repo)
    keyed = json.dumps({"parent_version": first.diff.parent_version,
                        "documents": [asdict(change) for change in first.diff.documents]})
    with write_transaction(repo.engine) as conn:
        conn.execute(update(SNAPSHOT).where(SNAPSHOT.c.version_id == first.version_id).values(diff_json=keyed))
    stored = repo.get_snapshot(first.version_id)
    assert stored is not None and stored.diff == first.diff and stored.diff.count("added") == first.document_count


def test_the_diff_is_stored_as_one_list_per_document_and_reads_back_the_same(sample_corpus: Path,
                                                                               repo: SqlCorpusRepository):
    snapshot_corpus(sample_corpus, CONFIG, repo)
    edited = sample_corpus / "v2" / "limits.md"
    edited.write_text(edited.read_text() + "\nOne more paragraph at the end of the page.\n")
    second = snapshot_corpus(sample_corpus, CONFIG, repo)
    with repo.engine.connect() as conn:
        raw = conn.execute(select(SNAPSHOT.c.diff_json).where(SNAPSHOT.c.version_id == second.version_id)).scalar_one()
    assert json.loads(raw)["documents"] == [["v2/limits.md", "changed", 0, 1, 0]]
    stored = repo.get_snapshot(second.version_id)
    assert stored is not None and stored.diff == second.diff
