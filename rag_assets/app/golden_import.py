"""Import an existing golden set (a ragas testset or the anthropic_docs dataset) as accepted items pinned to the
current corpus version: the ``import-golden`` command's use case.

The items join the accepted items of the corpus lineage, so the next golden-set build holds them; what could not
be located in the corpus is returned with why, not imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag_assets.app.store import KeptStore
from rag_assets.curation.inbox import file_sha256
from rag_assets.errors import RagAssetsError
from rag_assets.golden.importers import read_anthropic_docs_dataset, read_ragas_testset
from rag_assets.golden.models import ExternalItem
from rag_assets.golden.pinning import PinnedItem, pin_external_items


class ImportImpossible(RagAssetsError):
    """Nothing to pin the items to (no corpus snapshot in the store), or an anthropic_docs dataset without its
    chunks file."""


@dataclass(frozen=True)
class ImportOutcome:
    """What one import did: ``read`` items in the file, those ``pinned`` to ``corpus_version``, how many of them
    were ``new`` (an item imported before is left as it was) and the ``unmapped`` items with why."""

    corpus_version: str
    source: str
    read: int
    pinned: tuple[PinnedItem, ...]
    new: int
    unmapped: tuple[tuple[ExternalItem, str], ...]

    @property
    def item_ids(self) -> list[str]:
        """The golden item ids of the pinned items (``source:external id``)."""
        return [f"{self.source}:{p.item.external_id}" for p in self.pinned]


def read_golden_file(path: Path, file_format: str, chunks: Path | None) -> list[ExternalItem]:
    """The items of ``path``: an anthropic_docs dataset (its chunk texts in ``chunks``) or a ragas testset."""
    if file_format == "anthropic_docs":
        if chunks is None:
            raise ImportImpossible(f"{path}: an anthropic_docs dataset is read with its corpus chunks JSON; "
                                   "for example chunks=Path('anthropic_docs.json')")
        return read_anthropic_docs_dataset(path, chunks)
    return read_ragas_testset(path)


def import_golden_file(store: KeptStore, path: Path, file_format: str, chunks: Path | None,
                       plan_version: Callable[[], str]) -> ImportOutcome:
    """Read ``path``, pin its items to the corpus version ``plan_version()`` gives and save them as accepted.

    The file is read first, so a bad row is told even before a store exists; the version is planned only once
    the store is known to exist, since planning reads the store (and reading a SQLite store makes it).
    """
    items = read_golden_file(path, file_format, chunks)
    if not store.made():
        raise ImportImpossible(f"{store.describe()} holds no corpus snapshot yet; run `rag-assets run` first")
    version = plan_version()
    snapshot_chunks = store.corpus().snapshot_chunks(version)
    if not snapshot_chunks:
        raise ImportImpossible(f"corpus version {version} has no snapshot yet; run `rag-assets run` first")
    pinned, unmapped = pin_external_items(items, store.corpus().documents(version), snapshot_chunks)
    new = store.curation().import_items(pinned, version, file_format, path.name, file_sha256(path))
    return ImportOutcome(version, file_format, len(items), tuple(pinned), new, tuple(unmapped))
