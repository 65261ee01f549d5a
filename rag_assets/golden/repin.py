"""Pin accepted golden items to one corpus version by their evidence spans.

An item is *intact* when its relevant chunks are in the version with the same content and every
evidence span's document has the body it was pinned to: it is carried over as it is. Otherwise its
evidence is re-anchored (``rag_assets.evidence.anchor``): when every span's text is still in its
document, the item is *repinned*: pinned with the new offsets and the chunks of this version that hold
them; when some span's text is gone, the item is *stale* and goes back to review. An item that never
stored spans (every generated item before spans) has the spans of its relevant chunks.

A span whose document is gone from the version while the very body it was pinned to is there at another path
(the document was renamed or moved, its content unchanged) moves to that path at the same offsets: the item is
repinned and counted as *moved*. The path is never one the span is already at (an identical archived copy that
is one of its places), and a path new since the item's version comes first: the rename's target, not an old
copy. So a page deleted while such a copy stays makes its item stale, as any edit of the evidence does. A
document renamed and edited at once is not followed: whether its new text still answers the item is an
expert's call, as for any edit of the evidence.

So re-chunking a corpus, or editing a document elsewhere than in the evidence, never makes an item
stale; changing the evidence itself always does. The other places a span's text was found (``elsewhere``:
an archived copy of its page) are re-anchored alike and dropped where their text is gone; the span's own
place decides whether the item stays valid.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.evidence.anchor import ChunkIndex, reanchor, unchanged
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP, EvidenceSpan
from rag_assets.golden.models import GoldenItem


class RevisionStore(Protocol):
    """What re-anchoring reads of the store (``SqlCorpusRepository`` implements it)."""

    def body_hashes(self, version_id: str) -> dict[str, str | None]:
        """``path -> body hash`` of a snapshot's documents."""

    def documents(self, version_id: str, paths: Collection[str] | None = None) -> Documents:
        """A snapshot's document bodies at ``paths``."""

    def evidence_texts(self, evidence: Collection[EvidenceSpan]) -> dict[EvidenceSpan, str]:
        """Each span's text in the body it was pinned to."""

    def chunk_evidence(self, chunk_ids: Collection[str]) -> dict[str, EvidenceSpan]:
        """Each chunk's span, pinned to the body of a revision that holds it."""


@dataclass(frozen=True)
class PinTarget:
    """The corpus version a golden set is pinned to: its chunks and the store that holds its bodies."""

    version: str
    chunks: Sequence[SnapshotChunk]
    store: RevisionStore
    min_overlap: float = DEFAULT_MIN_OVERLAP


@dataclass(frozen=True)
class StaleItem:
    """An item whose evidence changed: ``kept`` are its spans re-anchored in the new version, ``lost``
    the spans (as pinned before) whose text is gone."""

    item: GoldenItem
    kept: tuple[EvidenceSpan, ...]
    lost: tuple[EvidenceSpan, ...]


@dataclass(frozen=True)
class Pinning:
    current: tuple[GoldenItem, ...]  # pinned to the target version, repinned ones with their new spans and chunks
    repinned: tuple[str, ...]  # ids of the items whose spans or chunks changed and that stay valid
    stale: tuple[StaleItem, ...]
    old_texts: Mapping[EvidenceSpan, str] = field(default_factory=dict)  # the texts of spans whose body changed
    documents: Documents = field(default_factory=lambda: Documents(()))  # the target's changed documents
    moved: tuple[str, ...] = ()  # the repinned items whose evidence moved to another path (a renamed document)


def _pinned(span: EvidenceSpan) -> tuple[EvidenceSpan, ...]:
    """The span and the other places its text was found, each pinned to its own body."""
    return (span, *span.elsewhere)


def _intact(item: GoldenItem, chunk_hashes: Mapping[str, str], bodies: Mapping[str, str | None]) -> bool:
    return (all(chunk_hashes.get(r.chunk_id) == r.content_hash for r in item.relevant_chunks)
            and all(unchanged(p, bodies) for e in item.evidence for p in _pinned(e)))


@dataclass(frozen=True)
class _Found:
    """What placing a span in the target reads: the target's body hashes, the old texts of the spans whose body
    changed, the target's changed documents and the target's paths of each body (sorted)."""

    bodies: Mapping[str, str | None]
    old_texts: Mapping[EvidenceSpan, str]
    documents: Documents
    paths_by_body: Mapping[str, tuple[str, ...]]


def _renamed(span: EvidenceSpan, found: _Found, taken: Collection[str],
             earlier: Collection[str]) -> EvidenceSpan | None:
    """``span`` at a path that holds the very body it was pinned to, when its own path is gone from the target
    (a renamed or moved document); None otherwise. The path is none of ``taken`` (the places of the span: a copy
    of the body may already be one of them), and a path the item's version did not have (``earlier``) comes
    before one it had: the rename's target, not an untouched copy; sorted among the rest, so the choice is stable."""
    if span.path in found.bodies:
        return None
    free = [p for p in found.paths_by_body.get(span.revision, ()) if p not in taken]
    path = min(free, key=lambda p: (p in earlier, p), default=None)
    return replace(span, path=path) if path else None


def _placed(span: EvidenceSpan, found: _Found, taken: set[str], earlier: Collection[str]) -> EvidenceSpan | None:
    """One place of a span in the target version, or None when its text is gone; its path joins ``taken``."""
    placed = (span if unchanged(span, found.bodies) else _renamed(span, found, taken, earlier)
              or reanchor(span, found.old_texts.get(span), found.documents.get(span.path)))
    if placed is not None:
        taken.add(placed.path)
    return placed


def _moved(span: EvidenceSpan, found: _Found, earlier: Collection[str]) -> EvidenceSpan | None:
    """``span`` in the target version, its places elsewhere with it, or None when its text is gone."""
    taken = {p.path for p in _pinned(span)}
    moved = _placed(span, found, taken, earlier)
    if moved is None or not span.elsewhere:
        return moved
    return replace(moved, elsewhere=tuple(
        placed for other in span.elsewhere if (placed := _placed(other, found, taken, earlier)) is not None))


def pin_items(items: Sequence[GoldenItem], target: PinTarget) -> Pinning:
    """Split ``items`` into those pinned to ``target`` (intact or repinned) and those gone stale."""
    chunk_hashes = {c.chunk_id: c.content_hash for c in target.chunks}
    bodies = target.store.body_hashes(target.version)
    current: dict[str, GoldenItem] = {}
    changed = []
    for item in items:
        if _intact(item, chunk_hashes, bodies):
            current[item.item_id] = item
        else:
            changed.append(item)
    if not changed:
        return Pinning(tuple(current[i] for i in sorted(current)), (), ())
    derived = target.store.chunk_evidence({r.chunk_id for i in changed if not i.evidence for r in i.relevant_chunks})
    evidence = {i.item_id: i.evidence or tuple(derived[r.chunk_id] for r in i.relevant_chunks if r.chunk_id in derived)
                for i in changed}
    moving = [p for spans in evidence.values() for e in spans for p in _pinned(e) if not unchanged(p, bodies)]
    old_texts = target.store.evidence_texts(moving)
    documents = target.store.documents(target.version, {e.path for e in moving} & set(bodies))
    paths_by_body: dict[str, tuple[str, ...]] = {}
    for path, digest in sorted(bodies.items()):
        if digest:
            paths_by_body[digest] = (*paths_by_body.get(digest, ()), path)
    found = _Found(bodies, old_texts, documents, paths_by_body)
    gone_from = {i.corpus_version for i in changed
                 if any(p.path not in bodies for e in evidence[i.item_id] for p in _pinned(e))}
    earlier = {v: target.store.body_hashes(v).keys() for v in gone_from}  # the paths of the items' versions
    anchored = {i.item_id: [(e, _moved(e, found, earlier.get(i.corpus_version, ()))) for e in evidence[i.item_id]]
                for i in changed}
    paths = {new.path for pairs in anchored.values() for _, new in pairs if new is not None}
    index = ChunkIndex(c for c in target.chunks if c.path in paths)
    repinned, stale, moved = [], [], []
    for item in changed:
        spans = evidence[item.item_id]
        kept = tuple(new for _, new in anchored[item.item_id] if new is not None)
        lost = tuple(old for old, new in anchored[item.item_id] if new is None)
        underived = not item.evidence and len(spans) < len(item.relevant_chunks)  # a chunk found nowhere
        if lost or underived:
            stale.append(StaleItem(item, kept, lost))
            continue
        refs = index.covering((e.span for e in kept), target.min_overlap)
        current[item.item_id] = replace(item, evidence=kept, relevant_chunks=refs)
        repinned.append(item.item_id)
        if [e.path for e in kept] != [e.path for e in spans]:
            moved.append(item.item_id)
    return Pinning(tuple(current[i] for i in sorted(current)), tuple(sorted(repinned)),
                   tuple(sorted(stale, key=lambda s: s.item.item_id)), old_texts, documents, tuple(sorted(moved)))
