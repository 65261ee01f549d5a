"""BM25 retrieval over a snapshot's chunks, with bm25s.

bm25s (sparse-matrix BM25 in numpy, Lucene's scoring variant) indexes tens of thousands of chunks
in seconds and answers hundreds of queries per second, where rank_bm25 is one to two orders of
magnitude slower; its indexes save to disk. Chunks are indexed with their heading (titles carry
much of a section's vocabulary) and stemmed with PyStemmer's English Snowball stemmer.
One index per corpus version, cached on disk under the project home and in memory.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RetrievedChunk

_STEMMER = Stemmer.Stemmer("english")
# Words of two or more characters, as bm25s does, plus dotted numbers ("2.0", "1.6") whole:
# product versions are often what tells two otherwise identical chunks apart.
TOKEN_PATTERN = r"(?u)\b\d+(?:\.\d+)+\b|\b\w\w+\b"
INDEX_FORMAT = 2


def _document(chunk: SnapshotChunk) -> str:
    version = f"version {chunk.doc_version}" if chunk.doc_version else ""
    return f"{chunk.title} {version}\n{chunk.heading}\n{chunk.text}"


def _tokenize(texts: Sequence[str]):
    return bm25s.tokenize(list(texts), token_pattern=TOKEN_PATTERN, stopwords="en", stemmer=_STEMMER,
                          show_progress=False)


class Bm25Index:
    def __init__(self, retriever: bm25s.BM25, chunks: Sequence[SnapshotChunk]) -> None:
        self._retriever = retriever
        self.chunk_ids = [c.chunk_id for c in chunks]
        self._texts = {c.chunk_id: c.text for c in chunks}
        self.doc_versions = {c.chunk_id: c.doc_version for c in chunks}  # what version-aware ranking reads
        self._lock = threading.Lock()

    @classmethod
    def build(cls, chunks: Sequence[SnapshotChunk]) -> Bm25Index:
        retriever = bm25s.BM25()
        retriever.index(_tokenize([_document(c) for c in chunks]), show_progress=False)
        return cls(retriever, chunks)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._retriever.save(str(folder))
        (folder / "chunk_ids.json").write_text(json.dumps({"format": INDEX_FORMAT, "chunk_ids": self.chunk_ids}))

    @classmethod
    def load(cls, folder: Path, chunks: Sequence[SnapshotChunk]) -> Bm25Index | None:
        meta_path = folder / "chunk_ids.json"
        if not meta_path.exists():
            return None
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != INDEX_FORMAT or meta["chunk_ids"] != [c.chunk_id for c in chunks]:
            return None
        return cls(bm25s.BM25.load(str(folder)), chunks)

    def search(self, query: str, k: int) -> list[RetrievedChunk]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int) -> list[list[RetrievedChunk]]:
        k = min(k, len(self.chunk_ids))
        if k == 0 or not queries:
            return [[] for _ in queries]
        tokens = _tokenize(queries)
        with self._lock:  # bm25s retrievers are not documented as thread-safe
            documents, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        out = []
        for row_docs, row_scores in zip(np.asarray(documents), np.asarray(scores)):
            out.append([RetrievedChunk(self.chunk_ids[int(d)], self._texts[self.chunk_ids[int(d)]], float(s), rank)
                        for rank, (d, s) in enumerate(zip(row_docs, row_scores), start=1) if s > 0])
        return out


_MEMORY: dict[str, Bm25Index] = {}


def index_for(corpus_version: str, chunks: SnapshotChunks, cache_dir: Path | None) -> Bm25Index:
    """The index of a corpus version: from memory (no chunk read), else from disk, else built (and saved)."""
    if corpus_version in _MEMORY:
        return _MEMORY[corpus_version]
    folder = cache_dir / corpus_version if cache_dir else None
    index = Bm25Index.load(folder, chunks.every()) if folder else None
    if index is None:
        index = Bm25Index.build(chunks.every())
        if folder:
            index.save(folder)
    _MEMORY[corpus_version] = index
    return index
