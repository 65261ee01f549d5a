"""Build the golden set of a corpus version: the golden_set asset's use case."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.app.store import Store
from rag_assets.errors import RagAssetsError
from rag_assets.golden.build import GoldenBuild, build_golden, diff_golden
from rag_assets.golden.export import export_golden
from rag_assets.golden.models import GoldenItem
from rag_assets.golden.repin import PinTarget
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMStats
from rag_assets.scoring.statements import extract_statements_failing
from rag_assets.store.golden_repository import GoldenVersion


class SnapshotMissing(RagAssetsError):
    """The corpus version's snapshot is not in the store."""


@dataclass
class GoldenOutcome:
    """What one build gave: ``saved`` is None while nothing is accepted (then the rest is empty). ``accepted``
    is the digest of the accepted items the build read (see ``SqlGoldenRepository.accepted_digest``)."""

    version: str
    accepted: str
    build: GoldenBuild
    saved: GoldenVersion | None
    items: list[GoldenItem] = field(default_factory=list)
    statements: int = 0
    stats: LLMStats | None = None
    exports: tuple[Path, Path] | None = None
    #: by item id, why its reference could not be split into statements (the call failed): asked again next build
    statement_failures: dict[str, str] = field(default_factory=dict)

    @property
    def by_type(self) -> list[tuple[str, int]]:
        return sorted(Counter(item.question_type for item in self.items).items())

    @property
    def changes(self) -> list[tuple[str, str]]:
        """(item, kind of change) against the parent version."""
        diff = self.saved.diff if self.saved else None
        return [(item_id, kind) for kind in diff.KINDS for item_id in getattr(diff, kind)] if diff else []


def nobody_reviewed(store: Store, version: str) -> bool:
    """Whether no decision exists for ``version``'s lineage: no accepted item (reviewed, imported or accepted
    unreviewed) and no applied review file. A golden set built then has no item and fails its checks for want of
    a review, not for a fault, so the golden_set asset builds none, as ``rag-assets run`` builds none before a review
    (a review that rejected everything is a decision: its empty golden set is built and fails)."""
    lineage = store.corpus().lineage(version)
    curation = store.curation()
    return not store.golden().accepted_items(lineage) and not any(curation.applied_files(v) for v in lineage)


def build_golden_version(store: Store, version: str, judge: Callable[[], LLMClient], export_dir: Path,
                     min_overlap: float) -> GoldenOutcome:
    """Pin the accepted items of ``version``'s lineage to it, save a new version when the content changed, split
    each new reference answer into statements once (through ``judge()``, made only when there is a version) and
    export the version as JSONL and ragas JSONL under ``export_dir``."""
    corpus, golden = store.corpus(), store.golden()
    chunks = corpus.snapshot_chunks(version)
    if not chunks:
        raise SnapshotMissing(f"corpus snapshot {version} is not in the store; materialize corpus_snapshot first")
    lineage = corpus.lineage(version)
    accepted = golden.accepted_digest(lineage)
    build = build_golden(PinTarget(version, chunks, corpus, min_overlap), golden.accepted_items(lineage))
    parent = golden.latest_version(lineage)
    # an item stale at the parent version and still stale is not counted as gone stale again
    parent_items, parent_stale = (golden.version_items(parent.number), parent.diff.stale_total) if parent else ((), ())
    saved = golden.save_version(build, parent, diff_golden(parent_items, build, parent_stale))
    if saved is None:
        return GoldenOutcome(version, accepted, build, None)
    items = golden.version_items(saved.number)
    statements, stats, failed = extract_statements_failing(items, judge(), store.llm_cache())
    golden.set_reference_statements(statements)
    exports = export_golden(items, saved.number, export_dir, {c.chunk_id: c.text for c in chunks},
                            corpus.evidence_texts({e for item in items for e in item.evidence}))
    return GoldenOutcome(version, accepted, build, saved, items, len(statements), stats, exports, failed)
