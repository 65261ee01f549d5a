"""Build a golden-set version for one corpus version from the accepted items.

Each accepted item is pinned to the corpus version by its evidence spans (``golden.repin``): carried
over as it is, repinned where its spans moved or its chunks were cut anew (moved where its document was
renamed), or stale (left out and sent back to review) where its evidence text changed, never silently kept.
An item stays stale, version after version, until an expert decides on it again: a version's diff tells the
items that went stale in it (``stale``) from those still stale since an earlier one (``still_stale``).
The content hash covers the pinned corpus version and every item's revision, content and evidence, so an
unchanged golden set makes no new version.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from rag_assets.corpus.models import sha256_hex
from rag_assets.golden.models import UNREVIEWED_ORIGIN, GoldenItem
from rag_assets.golden.repin import PinTarget, StaleItem, pin_items


@dataclass(frozen=True)
class GoldenDiff:
    """Each item the version differs in from its parent, once, by what happened to it in this version."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    # went stale in this version (a diff stored before ``still_stale`` lists every stale item here)
    stale: tuple[str, ...] = ()
    repinned: tuple[str, ...] = ()  # same revision, its evidence at new offsets or in other chunks of its document
    still_stale: tuple[str, ...] = ()  # stale since an earlier version, still waiting for a decision
    moved: tuple[str, ...] = ()  # same revision, its evidence in a document that was renamed

    KINDS = ("added", "removed", "changed", "stale", "repinned", "still_stale", "moved")

    def as_dict(self) -> dict[str, list[str]]:
        return {kind: list(getattr(self, kind)) for kind in self.KINDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Iterable[str]]) -> GoldenDiff:
        return cls(*(tuple(data.get(k, ())) for k in cls.KINDS))

    @property
    def empty(self) -> bool:
        return not any(getattr(self, kind) for kind in self.KINDS)

    @property
    def stale_total(self) -> tuple[str, ...]:
        """Every item left out of the version as stale: gone stale in it or still stale since before."""
        return tuple(sorted((*self.stale, *self.still_stale)))


@dataclass(frozen=True)
class GoldenBuild:
    corpus_version: str
    items: tuple[GoldenItem, ...]
    stale: tuple[StaleItem, ...]
    content_hash: str
    # Items pinned with other spans or chunks than their revision names: the version keeps those.
    repinned: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()  # the repinned items whose evidence is in a renamed document


def content_hash(corpus_version: str, items: Sequence[GoldenItem]) -> str:
    payload = [corpus_version] + [
        [i.item_id, i.revision, i.question_type, i.question, i.reference_answer,
         [[r.chunk_id, r.content_hash] for r in i.relevant_chunks]]
        # Evidence spans enter only where an item has its own, so versions made before spans keep their hash.
        + ([[e.to_json() for e in i.evidence]] if i.evidence else [])
        # So does the unreviewed label: an expert's accept of a trial's item makes a version without it.
        + ([i.origin] if i.origin == UNREVIEWED_ORIGIN else [])
        for i in sorted(items, key=lambda i: i.item_id)
    ]
    return sha256_hex(json.dumps(payload, ensure_ascii=False))


def build_golden(target: PinTarget, accepted: Sequence[GoldenItem]) -> GoldenBuild:
    pinning = pin_items(accepted, target)
    pinned = tuple(replace(i, corpus_version=target.version) for i in pinning.current)
    return GoldenBuild(target.version, pinned, pinning.stale, content_hash(target.version, pinned),
                       pinning.repinned, pinning.moved)


def diff_golden(parent_items: Sequence[GoldenItem], build: GoldenBuild,
                parent_stale: Collection[str] = ()) -> GoldenDiff:
    """Against the parent version's items and the items stale at it (``parent_stale``): what was added, removed,
    changed (a new revision), went stale or is still stale, moved (the same revision with its evidence in a renamed
    document) or was repinned (the same revision with its evidence at other offsets or in other chunks)."""
    now = {i.item_id: i for i in build.items}
    parent = {i.item_id: i for i in parent_items}
    stale = {s.item.item_id for s in build.stale}
    still = stale & set(parent_stale)
    both = sorted(set(now) & set(parent))
    kept = [i for i in both if now[i].revision == parent[i].revision]
    moved = set(build.moved)
    return GoldenDiff(
        added=tuple(sorted(set(now) - set(parent))),
        removed=tuple(sorted(set(parent) - set(now) - stale)),
        changed=tuple(i for i in both if now[i].revision != parent[i].revision),
        stale=tuple(sorted(stale - still)),
        repinned=tuple(i for i in kept if i not in moved and _pin(now[i]) != _pin(parent[i])),
        still_stale=tuple(sorted(still)),
        moved=tuple(i for i in kept if i in moved),
    )


def _pin(item: GoldenItem) -> tuple:
    return item.relevant_chunks, tuple((e.path, e.start, e.end, e.text_hash) for e in item.evidence)
