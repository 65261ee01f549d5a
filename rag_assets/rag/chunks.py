"""The pinned snapshot as a RAG step reads it: chunks by id where it can, all of them or the document
bodies only where it must.

A shard of answers needs the chunks its responses name (to fill in their text and span) and, only when
a system returns contexts as text, the revision's document bodies to locate them in; the reference
system needs every chunk only to build or load its index, which a process keeps once made. Loading a
large snapshot (69,000 chunks) costs about half a second, which every shard step used to pay.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.locate import Locator


class SnapshotChunks:
    def __init__(self, named: Callable[[Collection[str]], Sequence[SnapshotChunk]],
                 every: Callable[[], Sequence[SnapshotChunk]], documents: Callable[[], Documents]) -> None:
        self._named, self._every, self._documents = named, every, documents
        self._all: Sequence[SnapshotChunk] | None = None
        self._locator: Locator | None = None

    @classmethod
    def of(cls, chunks: Sequence[SnapshotChunk], documents: Documents | None = None) -> SnapshotChunks:
        """Chunks already in memory, with their documents (rebuilt from the chunks when not given)."""
        return cls(lambda ids: chunks, lambda: chunks, lambda: documents or Documents.from_chunks(chunks))

    def every(self) -> Sequence[SnapshotChunk]:
        """Every chunk of the snapshot, in document and reading order (loaded once)."""
        if self._all is None:
            self._all = self._every()
        return self._all

    def locator(self) -> Locator:
        """A locator over the revision's documents (loaded on first need, once)."""
        if self._locator is None:
            self._locator = Locator(self._documents())
        return self._locator

    def named(self, chunk_ids: Collection[str]) -> dict[str, SnapshotChunk]:
        """The chunks among ``chunk_ids`` that the snapshot holds, by id (from every chunk if loaded; the
        look-up may give more than asked, what was not asked is left out here)."""
        wanted = set(chunk_ids)
        if not wanted:
            return {}
        found = self._all if self._all is not None else self._named(wanted)
        return {c.chunk_id: c for c in found if c.chunk_id in wanted}
