"""Write a golden-set version to a file in one of the export formats: the ``export`` command's use case.

The ragas format carries the texts that answer each item, so they are read from the store with the items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_assets.app.store import KeptStore
from rag_assets.errors import RagAssetsError
from rag_assets.golden.export import FORMATS, write_golden
from rag_assets.store.golden_repository import GoldenVersion


class NoGoldenVersion(RagAssetsError):
    """The store holds no golden-set version, or not the one asked for."""


@dataclass(frozen=True)
class ExportOutcome:
    """The ``version`` written, how many ``items`` it holds and the file it is in."""

    version: GoldenVersion
    items: int
    path: Path


def export_golden_version(store: KeptStore, file_format: str, number: int | None = None,
                          out: Path | None = None) -> ExportOutcome:
    """Write golden-set version ``number`` (the newest when None) in ``file_format`` to ``out`` (by default
    ``golden-v{number}`` with the format's suffix in the working folder); an error names the versions there are."""
    versions = {v.number: v for v in store.golden().versions()} if store.made() else {}
    if not versions or (number is not None and number not in versions):
        known = f"versions: {', '.join(map(str, versions))}" if versions else "no version yet; run `rag-assets run`"
        wanted = "version" if number is None else f"version {number}"
        raise NoGoldenVersion(f"no golden-set {wanted} in {store.describe()} ({known})")
    chosen = versions[number if number is not None else max(versions)]
    items = store.golden().version_items(chosen.number)
    ids = {r.chunk_id for item in items for r in item.relevant_chunks}
    texts = {chunk_id: text for chunk_id, (_, text) in store.corpus().chunk_texts(ids).items()}
    written = out or Path(f"golden-v{chosen.number}{FORMATS[file_format]}")
    write_golden(items, written, file_format, texts,
                 store.corpus().evidence_texts({e for item in items for e in item.evidence}))
    return ExportOutcome(chosen, len(items), written)
