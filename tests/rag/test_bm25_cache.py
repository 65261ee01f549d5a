"""The BM25 index is built once per corpus version: kept in memory (no chunk read again), saved to disk,
loaded back."""

from pathlib import Path

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.rag import bm25
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from tests.conftest import SAMPLE_CORPUS


def test_the_index_is_saved_per_corpus_version_and_reloaded_instead_of_rebuilt(tmp_path: Path, monkeypatch):
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), repo).version_id
    chunks = repo.snapshot_chunks(version)
    reads: list[int] = []

    def snapshot() -> SnapshotChunks:
        return SnapshotChunks(lambda ids: [], lambda: reads.append(1) or chunks, lambda: repo.documents(version))

    monkeypatch.setattr(bm25, "_MEMORY", {})
    built = bm25.index_for(version, snapshot(), tmp_path / "indexes")
    assert (tmp_path / "indexes" / version / "chunk_ids.json").exists() and len(reads) == 1
    assert bm25.index_for(version, snapshot(), tmp_path / "indexes") is built, "the same process reuses it"
    assert len(reads) == 1, "without reading the snapshot's chunks again"
    assert built.doc_versions == {c.chunk_id: c.doc_version for c in chunks}
    saved = {p: p.stat().st_mtime_ns for p in (tmp_path / "indexes" / version).iterdir()}
    monkeypatch.setattr(bm25, "_MEMORY", {})  # a new process: nothing in memory
    loaded = bm25.index_for(version, snapshot(), tmp_path / "indexes")
    assert loaded is not built
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "indexes" / version).iterdir()} == saved, "loaded, not rebuilt"
    question = "In version 2.0, what is the maximum file size?"
    assert [h.chunk_id for h in loaded.search(question, 3)] == [h.chunk_id for h in built.search(question, 3)]
    assert bm25.Bm25Index.load(tmp_path / "indexes" / version, chunks[:-1]) is None, "a different chunk list is not reused"
