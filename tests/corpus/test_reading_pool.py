"""Files read in worker processes give exactly what the in-process path gives, in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.corpus import loaders, reading
from rag_assets.corpus.manifest import scan
from rag_assets.corpus.models import ChunkerConfig, LoadedDocument
from rag_assets.corpus.reading import pool_size, read_files
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine

CONFIG = ChunkerConfig(target_chars=300, overlap_chars=50, min_chars=80, max_file_bytes=20_000)


@pytest.fixture
def corpus_with_bad_files(sample_corpus: Path) -> Path:
    (sample_corpus / "bad").mkdir()
    (sample_corpus / "bad" / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (sample_corpus / "bad" / "empty.txt").write_bytes(b"")
    return sample_corpus


def test_pool_and_serial_reads_are_identical_and_in_input_order(corpus_with_bad_files: Path):
    files = scan(corpus_with_bad_files, CONFIG).files
    serial = read_files(files, CONFIG, chunk=True, workers=1)
    pooled = read_files(files, CONFIG, chunk=True, workers=2)
    assert pooled == serial
    assert [read.path for read in pooled] == [file.path for file in files]
    assert {read.path: read.problem for read in pooled if read.problem} == {
        "bad/empty.txt": "empty file", "bad/latin1.md": "not valid UTF-8 (invalid byte at offset 3)"}
    assert sum(len(read.chunks or ()) for read in pooled) > len(files)


def test_a_snapshot_through_the_pool_stores_the_same_chunk_ids(
    corpus_with_bad_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    serial_repo = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'serial.db'}"))
    serial = snapshot_corpus(corpus_with_bad_files, CONFIG, serial_repo)
    monkeypatch.setattr(reading, "POOL_MIN_FILES", 1)
    pooled_repo = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'pooled.db'}"))
    pooled = snapshot_corpus(corpus_with_bad_files, CONFIG, pooled_repo)
    assert (pooled.version_id, pooled.chunk_count, pooled.skipped) == (serial.version_id, serial.chunk_count,
                                                                         serial.skipped)
    assert pooled_repo.chunks(pooled.version_id) == serial_repo.chunks(serial.version_id)
    assert pooled_repo.snapshot_chunks(pooled.version_id) == serial_repo.snapshot_chunks(serial.version_id)


def test_a_small_corpus_is_read_in_process(sample_corpus: Path):
    files = scan(sample_corpus, CONFIG).files
    assert len(files) < reading.POOL_MIN_FILES and sum(f.size for f in files) < reading.POOL_MIN_BYTES
    assert pool_size(files) == 1


def test_a_loader_registered_in_code_keeps_reading_in_process(
    sample_corpus: Path, monkeypatch: pytest.MonkeyPatch
):
    files = scan(sample_corpus, CONFIG).files
    monkeypatch.setattr(reading, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(reading, "_available_cores", lambda: 2)
    assert pool_size(files) == 2
    monkeypatch.setitem(loaders._REGISTERED, ".rst", lambda text, path: LoadedDocument(None, text))
    assert pool_size(files) == 1, "a worker process would not know the .rst loader"
