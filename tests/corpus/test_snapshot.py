"""Snapshots on a real store (SQLite and PostgreSQL): versioning, incremental reads, diffs, bad input."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import plan_snapshot, planned_parent, read_chunks, snapshot_corpus
from rag_assets.errors import CorpusError
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine

CONFIG = ChunkerConfig(target_chars=300, overlap_chars=50, min_chars=80, max_file_bytes=10_000)


def _write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _doc(title: str, paragraphs: int = 3) -> str:
    body = "\n\n".join(f"Paragraph {i} of {title} says the quota is {i * 10} GB per vault." for i in range(paragraphs))
    return f'---\ntitle: "{title}"\nversion: "2.0"\ndate: 2025-01-0{min(paragraphs, 9)}\n---\n# {title}\n\n{body}\n'


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    _write(root, "guide/install.md", _doc("Install", 6))
    _write(root, "guide/limits.md", _doc("Limits", 8))
    _write(root, "faq.txt", _doc("FAQ", 2))
    _write(root, "ports.html", "<html><head><title>Ports</title></head><body><h1>Ports</h1><p>Port 7443.</p></body></html>")
    return root


@pytest.fixture
def repo(store_url: str) -> SqlCorpusRepository:
    return SqlCorpusRepository(get_engine(store_url))


def test_identical_corpus_gives_the_same_version_and_no_new_rows(corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(corpus, CONFIG, repo)
    rows = repo.row_counts()
    second = snapshot_corpus(corpus, CONFIG, repo)
    assert first.created and not second.created
    assert second.version_id == first.version_id
    assert repo.row_counts() == rows
    assert second.files_read == 0, "an unchanged file is not opened again"
    assert rows["corpus_snapshot"] == 1 and rows["snapshot_document"] == 4
    assert first.document_count == 4 and first.chunk_count == rows["chunk"]
    assert first.diff.count("added") == 4 and first.diff.parent_version is None


def test_read_chunks_gives_the_stored_snapshots_version_and_chunks_without_a_store(corpus: Path,
                                                                                   repo: SqlCorpusRepository):
    version, chunks, _ = read_chunks(corpus, CONFIG)
    stored = snapshot_corpus(corpus, CONFIG, repo)
    assert version == stored.version_id and chunks == repo.snapshot_chunks(version)
    assert {c.path for c in chunks} == {"guide/install.md", "guide/limits.md", "faq.txt", "ports.html"}


def test_a_touched_but_unchanged_file_is_rehashed_and_keeps_the_version(corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(corpus, CONFIG, repo)
    path = corpus / "faq.txt"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    second = snapshot_corpus(corpus, CONFIG, repo)
    assert (second.version_id, second.created, second.files_read) == (first.version_id, False, 1)
    assert snapshot_corpus(corpus, CONFIG, repo).files_read == 0, "the stat cache learned the new mtime"


def test_one_changed_file_rechunks_only_that_document_and_the_diff_names_it(corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(corpus, CONFIG, repo)
    old_ids = {c.chunk_id for c in repo.chunks(first.version_id)}
    limits = corpus / "guide/limits.md"
    limits.write_text(limits.read_text().replace("Paragraph 7 of Limits says the quota is 70 GB", "Paragraph 7 of Limits says the quota is 75 GB"))
    rows_before = repo.row_counts()
    second = snapshot_corpus(corpus, CONFIG, repo)
    assert second.created and second.version_id != first.version_id
    assert second.files_read == 1
    assert second.diff.parent_version == first.version_id
    assert [(d.path, d.change) for d in second.diff.documents] == [("guide/limits.md", "changed")]
    change = second.diff.documents[0]
    assert (change.chunks_added, change.chunks_changed, change.chunks_removed) == (0, 1, 0)
    rows_after = repo.row_counts()
    assert rows_after["document_revision"] - rows_before["document_revision"] == 1
    new_ids = {c.chunk_id for c in repo.chunks(second.version_id)}
    assert len(new_ids - old_ids) == 1 and len(old_ids - new_ids) == 1


def test_the_planned_parent_and_lineage_are_the_ones_the_snapshot_then_gets(corpus: Path, repo: SqlCorpusRepository):
    assert planned_parent(corpus, CONFIG, repo) is None
    first = snapshot_corpus(corpus, CONFIG, repo)
    limits = corpus / "guide/limits.md"
    limits.write_text(limits.read_text() + "\nOne more line.\n")
    planned = plan_snapshot(corpus, CONFIG, repo).version_id
    assert repo.lineage(planned) == [planned], "before its snapshot the store knows no parent for it"
    assert planned_parent(corpus, CONFIG, repo) == first.version_id
    second = snapshot_corpus(corpus, CONFIG, repo)
    assert second.version_id == planned and second.diff.parent_version == first.version_id
    assert repo.lineage(second.version_id) == [planned, first.version_id]


def test_a_copied_and_edited_folder_continues_the_version_it_was_copied_from(
        corpus: Path, repo: SqlCorpusRepository, tmp_path: Path):
    first = snapshot_corpus(corpus, CONFIG, repo)
    limits = corpus / "guide/limits.md"
    limits.write_text(limits.read_text() + "\nOne more line.\n")
    second = snapshot_corpus(corpus, CONFIG, repo)
    copy = tmp_path / "elsewhere" / "corpus2"
    shutil.copytree(corpus, copy)
    _write(copy, "faq.txt", _doc("FAQ", 5))
    _write(copy, "guide/new.md", _doc("New", 2))
    assert planned_parent(copy, CONFIG, repo) == second.version_id, "3 of its 4 documents are here, 2 of the first's"
    moved = snapshot_corpus(copy, CONFIG, repo)
    assert moved.diff.parent_version == second.version_id
    assert [(d.path, d.change) for d in moved.diff.documents] == [("faq.txt", "changed"), ("guide/new.md", "added")]
    assert repo.lineage(moved.version_id) == [moved.version_id, second.version_id, first.version_id]


def test_a_folder_sharing_half_of_a_versions_documents_or_fewer_starts_its_own_lineage(
        corpus: Path, repo: SqlCorpusRepository, tmp_path: Path):
    snapshot_corpus(corpus, CONFIG, repo)
    other = tmp_path / "other"
    shutil.copytree(corpus, other)
    _write(other, "faq.txt", _doc("FAQ", 5))
    _write(other, "ports.html", "<html><body><h1>Ports</h1><p>Port 8443.</p></body></html>")
    assert planned_parent(other, CONFIG, repo) is None, "2 of the version's 4 documents: not more than half"
    outcome = snapshot_corpus(other, CONFIG, repo)
    assert outcome.diff.parent_version is None and {d.change for d in outcome.diff.documents} == {"added"}


def test_a_big_folder_holding_a_small_versions_documents_starts_its_own_lineage(
        repo: SqlCorpusRepository, tmp_path: Path):
    small = tmp_path / "small"
    for name in ("a", "b"):
        _write(small, f"{name}.md", _doc(name.upper()))
    snapshot_corpus(small, CONFIG, repo)
    big = tmp_path / "big"
    shutil.copytree(small, big)
    for name in ("c", "d", "e", "f", "g"):
        _write(big, f"{name}.md", _doc(name.upper()))
    assert planned_parent(big, CONFIG, repo) is None, "all of the version's 2 documents, but 2 of the folder's 7"
    outcome = snapshot_corpus(big, CONFIG, repo)
    assert outcome.diff.parent_version is None and {d.change for d in outcome.diff.documents} == {"added"}


def test_added_and_removed_documents_appear_in_the_diff(corpus: Path, repo: SqlCorpusRepository):
    snapshot_corpus(corpus, CONFIG, repo)
    (corpus / "faq.txt").unlink()
    _write(corpus, "guide/new.md", _doc("New", 2))
    outcome = snapshot_corpus(corpus, CONFIG, repo)
    assert sorted((d.path, d.change) for d in outcome.diff.documents) == [
        ("faq.txt", "removed"), ("guide/new.md", "added")]
    assert outcome.document_count == 4


def test_a_document_moved_with_its_content_is_one_rename_in_the_diff_and_a_moved_and_edited_one_is_not(
        corpus: Path, repo: SqlCorpusRepository):
    snapshot_corpus(corpus, CONFIG, repo)
    (corpus / "setup").mkdir()
    (corpus / "guide/install.md").rename(corpus / "setup/install.md")
    (corpus / "faq.txt").rename(corpus / "questions.txt")
    _write(corpus, "ports-moved.html", (corpus / "ports.html").read_text().replace("7443", "8443"))
    (corpus / "ports.html").unlink()
    outcome = snapshot_corpus(corpus, CONFIG, repo)
    assert [(d.shown_path, d.change, d.chunks_added, d.chunks_changed, d.chunks_removed)
            for d in outcome.diff.documents] == [
        ("ports-moved.html", "added", 1, 0, 0), ("ports.html", "removed", 0, 0, 1),
        ("faq.txt -> questions.txt", "renamed", 0, 0, 0), ("guide/install.md -> setup/install.md", "renamed", 0, 0, 0)]
    assert repo.get_snapshot(outcome.version_id).diff == outcome.diff, "the stored diff keeps the old paths"


def test_chunk_ids_are_stable_across_stores_and_runs(corpus: Path, repo: SqlCorpusRepository, tmp_path: Path):
    first = snapshot_corpus(corpus, CONFIG, repo)
    other = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'other.db'}"))
    again = snapshot_corpus(corpus, CONFIG, other)
    assert again.version_id == first.version_id
    assert [c.chunk_id for c in other.chunks(again.version_id)] == [c.chunk_id for c in repo.chunks(first.version_id)]


def test_chunker_config_enters_the_version(corpus: Path, repo: SqlCorpusRepository):
    first = snapshot_corpus(corpus, CONFIG, repo)
    second = snapshot_corpus(corpus, ChunkerConfig(target_chars=500, overlap_chars=50, min_chars=80), repo)
    assert second.version_id != first.version_id
    assert second.files_read == 0, "new chunks are cut from files re-read for chunking, not re-hashed"
    assert {d.change for d in second.diff.documents} == {"changed"}


def test_bad_files_are_skipped_with_reasons_and_the_rest_is_snapshotted(corpus: Path, repo: SqlCorpusRepository, tmp_path: Path):
    _write(corpus, "bad/latin1.md", "caf\xe9 au lait".encode("latin-1"))
    _write(corpus, "bad/empty.md", "")
    _write(corpus, "bad/only-front-matter.md", "---\ntitle: nothing\n---\n\n")
    _write(corpus, "bad/huge.md", "word " * 3000)
    _write(corpus, "bad/broken-yaml.md", "---\ntitle: [oops\n---\nbody\n")
    _write(corpus, "image.png", b"\x89PNG")
    outside = _write(tmp_path, "outside/secret.md", _doc("Secret"))
    (corpus / "escape.md").symlink_to(outside)
    (corpus / "inside-link.md").symlink_to(corpus / "faq.txt")
    outcome = snapshot_corpus(corpus, CONFIG, repo)
    reasons = {s.path: s.reason for s in outcome.skipped}
    assert reasons["bad/latin1.md"] == "not valid UTF-8 (invalid byte at offset 3)"
    assert reasons["bad/empty.md"] == "empty file"
    assert reasons["bad/only-front-matter.md"] == "empty document: no text after front matter or markup"
    assert reasons["bad/huge.md"] == "too large: 15,000 bytes > max_file_bytes 10,000"
    assert reasons["bad/broken-yaml.md"].startswith("invalid YAML front matter at line 2, field 'title'")
    assert reasons["image.png"] == "unsupported file type '.png'"
    assert reasons["escape.md"].startswith("symbolic link leading outside the corpus root")
    assert reasons["inside-link.md"].startswith("symbolic link; links are not followed")
    assert len(reasons) == 8
    assert outcome.document_count == 4
    assert "Secret" not in " ".join(c.text for c in repo.chunks(outcome.version_id))


def test_a_skipped_file_is_not_read_again_while_unchanged(corpus: Path, repo: SqlCorpusRepository):
    _write(corpus, "bad/latin1.md", "caf\xe9".encode("latin-1"))
    snapshot_corpus(corpus, CONFIG, repo)
    again = snapshot_corpus(corpus, CONFIG, repo)
    assert again.files_read == 0 and [s.path for s in again.skipped] == ["bad/latin1.md"]


def test_a_missing_root_fails_with_its_path(tmp_path: Path, repo: SqlCorpusRepository):
    with pytest.raises(CorpusError, match=rf"corpus root {tmp_path / 'nope'} does not exist"):
        snapshot_corpus(tmp_path / "nope", CONFIG, repo)


def test_an_empty_root_fails_clearly(tmp_path: Path, repo: SqlCorpusRepository):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="is empty: no .md, .txt or .html files found"):
        snapshot_corpus(tmp_path / "empty", CONFIG, repo)


def test_a_root_with_only_bad_files_fails_and_names_the_first(tmp_path: Path, repo: SqlCorpusRepository):
    _write(tmp_path / "c", "a.md", "")
    with pytest.raises(CorpusError, match=r"no usable document: all 1 files were skipped \(first: a.md: empty file\)"):
        snapshot_corpus(tmp_path / "c", CONFIG, repo)


def test_a_file_as_root_is_refused(corpus: Path, repo: SqlCorpusRepository):
    with pytest.raises(CorpusError, match="is not a folder"):
        snapshot_corpus(corpus / "faq.txt", CONFIG, repo)


def test_a_partition_guard_refuses_a_corpus_that_moved_on(corpus: Path, repo: SqlCorpusRepository):
    with pytest.raises(CorpusError, match=r"is now version cv-[0-9a-f]{12}, not cv-000000000000"):
        snapshot_corpus(corpus, CONFIG, repo, expected_version="cv-000000000000")
    assert repo.row_counts()["corpus_snapshot"] == 0
