"""The pinned snapshot's chunks as a RAG step reads them: by id where it can, all of them only where it must.

A shard of answers needs the chunks its responses name (to fill in their text and document) and,
only when a system returns contexts as text, every chunk to map those onto; the reference system
needs every chunk only to build or load its index, which a process keeps once made. Loading a large
snapshot (69,000 chunks) costs about half a second, which every shard step used to pay.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from rag_assets.corpus.models import SnapshotChunk


class SnapshotChunks:
    def __init__(self, named: Callable[[Collection[str]], Sequence[SnapshotChunk]],
                 every: Callable[[], Sequence[SnapshotChunk]]) -> None:
        self._named, self._every = named, every
        self._all: Sequence[SnapshotChunk] | None = None

    @classmethod
    def of(cls, chunks: Sequence[SnapshotChunk]) -> SnapshotChunks:
        """Chunks already in memory."""
        return cls(lambda ids: chunks, lambda: chunks)

    def every(self) -> Sequence[SnapshotChunk]:
        """Every chunk of the snapshot, in document and reading order (loaded once)."""
        if self._all is None:
            self._all = self._every()
        return self._all

    def named(self, chunk_ids: Collection[str]) -> dict[str, SnapshotChunk]:
        """The chunks among ``chunk_ids`` that the snapshot holds, by id (from every chunk if loaded; the
        look-up may give more than asked, what was not asked is left out here)."""
        wanted = set(chunk_ids)
        if not wanted:
            return {}
        found = self._all if self._all is not None else self._named(wanted)
        return {c.chunk_id: c for c in found if c.chunk_id in wanted}
