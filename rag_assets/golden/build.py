"""Build a golden-set version for one corpus version from the accepted items.

An accepted item whose relevant chunks all exist in the corpus version with the same content
hash is carried over and pinned to it; one whose chunks changed or vanished is stale: left out
and sent back to review, never silently kept. The content hash covers the pinned corpus version
and every item's revision and content, so an unchanged golden set makes no new version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from rag_assets.corpus.models import ChunkRef, sha256_hex
from rag_assets.golden.models import GoldenItem


@dataclass(frozen=True)
class StaleItem:
    item: GoldenItem
    missing: tuple[ChunkRef, ...]  # relevant chunks whose id or content is not in the corpus version


@dataclass(frozen=True)
class GoldenDiff:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, list[str]]:
        return {"added": list(self.added), "removed": list(self.removed), "changed": list(self.changed),
                "stale": list(self.stale)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Iterable[str]]) -> GoldenDiff:
        return cls(*(tuple(data.get(k, ())) for k in ("added", "removed", "changed", "stale")))

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.stale)


@dataclass(frozen=True)
class GoldenBuild:
    corpus_version: str
    items: tuple[GoldenItem, ...]
    stale: tuple[StaleItem, ...]
    content_hash: str


def classify(items: Iterable[GoldenItem], chunk_hashes: Mapping[str, str]) -> tuple[list[GoldenItem], list[StaleItem]]:
    """Split items into those whose evidence is intact in a snapshot and those that went stale."""
    current: list[GoldenItem] = []
    stale: list[StaleItem] = []
    for item in items:
        missing = tuple(r for r in item.relevant_chunks if chunk_hashes.get(r.chunk_id) != r.content_hash)
        (stale.append(StaleItem(item, missing)) if missing else current.append(item))
    return current, stale


def content_hash(corpus_version: str, items: Sequence[GoldenItem]) -> str:
    payload = [corpus_version] + [
        [i.item_id, i.revision, i.question_type, i.question, i.reference_answer,
         [[r.chunk_id, r.content_hash] for r in i.relevant_chunks]]
        # Evidence spans enter only where an item has its own, so versions made before spans keep their hash.
        + ([[e.to_json() for e in i.evidence]] if i.evidence else [])
        for i in sorted(items, key=lambda i: i.item_id)
    ]
    return sha256_hex(json.dumps(payload, ensure_ascii=False))


def build_golden(corpus_version: str, accepted: Iterable[GoldenItem], chunk_hashes: Mapping[str, str]) -> GoldenBuild:
    current, stale = classify(accepted, chunk_hashes)
    pinned = tuple(sorted((replace(i, corpus_version=corpus_version) for i in current), key=lambda i: i.item_id))
    return GoldenBuild(corpus_version, pinned, tuple(sorted(stale, key=lambda s: s.item.item_id)),
                       content_hash(corpus_version, pinned))


def diff_golden(parent: Mapping[str, int], build: GoldenBuild) -> GoldenDiff:
    """Against the parent version's ``item_id -> revision``: what was added, removed, changed, went stale."""
    now = {i.item_id: i.revision for i in build.items}
    stale = {s.item.item_id for s in build.stale}
    return GoldenDiff(
        added=tuple(sorted(set(now) - set(parent))),
        removed=tuple(sorted(set(parent) - set(now) - stale)),
        changed=tuple(sorted(i for i in set(now) & set(parent) if now[i] != parent[i])),
        stale=tuple(sorted(stale)),
    )
