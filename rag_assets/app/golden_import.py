"""Import an existing golden set (a ragas testset or the anthropic_docs dataset) as accepted items pinned to the
current corpus version: the ``import-golden`` command's use case.

The items join the accepted items of the corpus lineage, so the next golden-set build holds them. An item that
cannot be located in the corpus stops the import whole (``ItemsNotLocated``, bad input): a team importing 50 items
that found 45 would not notice the 5 missing from its golden set. Asked to skip them, the import saves the others
and returns those with why. An item asking again, with another reference, the question of an item imported before
replaces its reference with a new revision (see ``SqlCurationRepository.import_items``), which the outcome lists:
the golden-set versions made before keep the old one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag_assets.app.store import KeptStore
from rag_assets.curation.inbox import file_sha256
from rag_assets.errors import RagAssetsError
from rag_assets.golden.importers import ExternalDataError, read_anthropic_docs_dataset, read_ragas_testset
from rag_assets.golden.models import ExternalItem, Replaced
from rag_assets.golden.pinning import PinnedItem, pin_external_items


class ImportImpossible(RagAssetsError):
    """Nothing to pin the items to (no corpus snapshot in the store), or an anthropic_docs dataset without its
    chunks file."""


class ItemsNotLocated(ExternalDataError):
    """Items of a golden-set file whose texts are in no document of the corpus version: nothing was imported.

    One line naming the file, the first such item's row and field, how many there are and how to import the
    others; ``unlocated`` holds every one with why."""

    def __init__(self, path: Path, version: str, read: int, unlocated: tuple[tuple[ExternalItem, str], ...]) -> None:
        self.unlocated = unlocated
        first, why = unlocated[0]
        located = read - len(unlocated)
        skip = (f"; re-run with --skip-unlocated to import the {located} other{'s' if located > 1 else ''}"
                if located else "")
        super().__init__(f"{path}: {len(unlocated)} of {read} item{'s' if read > 1 else ''} could not be located in "
                         f"corpus version {version}; first: {first.location}: {why}; nothing imported{skip}")


@dataclass(frozen=True)
class ImportOutcome:
    """What one import did: ``read`` items in the file, those ``pinned`` to ``corpus_version``, how many of them
    were ``new`` (an item imported before is left as it was), the ``unmapped`` items with why, and the items
    imported before whose reference the file ``replaced``."""

    corpus_version: str
    source: str
    read: int
    pinned: tuple[PinnedItem, ...]
    new: int
    unmapped: tuple[tuple[ExternalItem, str], ...]
    replaced: tuple[Replaced, ...] = ()

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
                       plan_version: Callable[[], str], *, skip_unlocated: bool = False) -> ImportOutcome:
    """Read ``path``, pin its items to the corpus version ``plan_version()`` gives and save them as accepted.

    The file is read first, so a bad row is told even before a store exists; the version is planned only once
    the store is known to exist, since planning reads the store (and reading a SQLite store makes it). An item
    that cannot be pinned raises ``ItemsNotLocated`` before anything is saved, unless ``skip_unlocated``: then
    the others are saved and it is in the outcome's ``unmapped``.
    """
    items = read_golden_file(path, file_format, chunks)
    if not store.made():
        raise ImportImpossible(f"{store.describe()} holds no corpus snapshot yet; run `rag-assets run` first")
    version = plan_version()
    snapshot_chunks = store.corpus().snapshot_chunks(version)
    if not snapshot_chunks:
        raise ImportImpossible(f"corpus version {version} has no snapshot yet; run `rag-assets run` first")
    pinned, unmapped = pin_external_items(items, store.corpus().documents(version), snapshot_chunks)
    if unmapped and not skip_unlocated:
        raise ItemsNotLocated(path, version, len(items), tuple(unmapped))
    done = store.curation().import_items(pinned, version, file_format, path.name, file_sha256(path))
    return ImportOutcome(version, file_format, len(items), tuple(pinned), done.new, tuple(unmapped), done.replaced)
