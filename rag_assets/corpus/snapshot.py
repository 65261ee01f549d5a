"""Take a corpus snapshot: manifest, chunks for new document revisions, diff, one save.

Whether the corpus is unchanged is decided from the stat walk alone: when every candidate file
has the path, size and mtime_ns it had at the last snapshot of this root (and the files refused
up front and the chunker config are the same), the walk's fingerprint equals the one recorded
then and that snapshot is returned without opening a file. Any difference falls back to the
manifest, which reads only the files whose size or mtime moved; the version is a hash of
contents, so a file touched without being changed is read once and keeps the version.

The store is reached through ``SnapshotRepository`` so that this module stays free of SQL and of
Dagster; ``rag_assets.store.corpus_repository`` implements it.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from rag_assets.corpus.manifest import Manifest, build_manifest, describe, resolve_root, scan
from rag_assets.corpus.models import (
    CachedStat,
    ChunkerConfig,
    DocumentChange,
    DocumentRevision,
    ScannedFile,
    SnapshotChunk,
    SnapshotDiff,
    SnapshotOutcome,
)
from rag_assets.corpus.reading import read_file
from rag_assets.errors import CorpusError


class SnapshotRepository(Protocol):
    """What a snapshot needs from the store."""

    def stat_cache(self, root: str) -> dict[str, CachedStat]: ...

    def update_stat_cache(self, root: str, changed: Mapping[str, CachedStat], removed: Collection[str]) -> None: ...

    def listing_version(self, root: str, fingerprint: str) -> str | None: ...

    def record_listing(self, root: str, fingerprint: str, version_id: str) -> None: ...

    def get_snapshot(self, version_id: str) -> SnapshotOutcome | None: ...

    def latest_version(self, root: str) -> str | None: ...

    def current_version(self, root: str) -> str | None: ...

    def versions_sharing(self, content_hashes: Collection[str]) -> list[tuple[str, int, int]]: ...

    def document_revisions(self, version_id: str) -> dict[str, str]: ...

    def revision_chunk_counts(self, revision_ids: Collection[str]) -> dict[str, int]: ...

    def chunk_hashes(self, revision_ids: Collection[str]) -> dict[str, list[str]]: ...

    def revision_content_hashes(self, revision_ids: Collection[str]) -> dict[str, str]: ...

    def save_snapshot(
        self, outcome: SnapshotOutcome, revisions: list[DocumentRevision], documents: Mapping[str, str]
    ) -> None: ...


def plan_snapshot(root: str | Path, config: ChunkerConfig, repo: SnapshotRepository) -> Manifest:
    """The manifest (and so the version id) the corpus has now, without saving anything."""
    resolved = str(resolve_root(root))
    return build_manifest(resolved, config, repo.stat_cache(resolved))


def planned_parent(root: str | Path, config: ChunkerConfig, repo: SnapshotRepository) -> str | None:
    """The parent a new snapshot of ``root`` gets when it is taken now (``snapshot_corpus``): the version the folder
    held at its last snapshot (``current_version``); for the first snapshot of the folder, the stored version it
    continues (``continued_version``: the folder's files are read to know), else None."""
    resolved = str(resolve_root(root))
    held = current_version(repo, resolved)
    if held is not None:
        return held
    return continued_version(repo, plan_snapshot(resolved, config, repo).content_hashes())


def held_version(root: str | Path, repo: SnapshotRepository) -> str | None:
    """The version the folder held at its last snapshot, for a reader that must not fail: None when it has none or
    the folder is gone. What the schedule re-evaluates, production's coverage reads and ``rag-assets status`` names."""
    try:
        return current_version(repo, str(resolve_root(root)))
    except CorpusError:
        return None


def read_chunks(root: str | Path, config: ChunkerConfig) -> tuple[str, list[SnapshotChunk], dict[str, str]]:
    """The version id, chunks and document bodies a snapshot of ``root`` would store, without a store:
    chunk ids depend only on path, content and chunker, so they are the stored snapshot's ids (in its order)."""
    manifest = build_manifest(resolve_root(root), config, {})
    documents = {entry.path: entry.revision_id(config) for entry in manifest.entries}
    revisions = sorted(_new_revisions(manifest, documents, (), config), key=lambda r: r.entry.path)
    chunks = [SnapshotChunk(c.chunk_id, c.content_hash, c.path, r.meta.title, r.meta.version, r.meta.date, c.heading,
                            c.text, c.start, c.end)
              for r in revisions for c in sorted(r.chunks, key=lambda c: c.ordinal)]
    return manifest.version_id, chunks, {r.entry.path: r.body for r in revisions}


def _new_revisions(manifest: Manifest, documents: Mapping[str, str], present: Collection[str],
                   config: ChunkerConfig) -> list[DocumentRevision]:
    revisions: list[DocumentRevision] = []
    for entry in manifest.entries:
        revision_id = documents[entry.path]
        if revision_id in present:
            continue
        meta, chunks = manifest.loaded.get(entry.path), manifest.chunked.get(entry.path)
        body = manifest.bodies.get(entry.path)
        if meta is None or chunks is None or body is None:
            # Trusted from the stat cache, but its chunks are not in the store (a new chunker config).
            read = read_file(ScannedFile(entry.path, os.path.join(manifest.root, entry.path), entry.size,
                                         entry.mtime_ns), config, chunk=True)
            if read.content_hash is None or read.problem:
                raise CorpusError(f"{entry.path}: cannot be re-read for chunking: {read.problem}")
            if read.content_hash != entry.content_hash:
                raise CorpusError(f"{entry.path} changed while the snapshot was taken; run the snapshot again")
            meta, chunks, body = read.meta, read.chunks, read.body
        assert meta is not None and chunks is not None and body is not None
        revisions.append(DocumentRevision(revision_id, entry, meta, chunks, body))
    return revisions


def _chunk_delta(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """(added, changed, removed) chunks between two ordered lists of chunk content hashes."""
    added = changed = removed = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "replace":
            paired = min(i2 - i1, j2 - j1)
            changed += paired
            added += (j2 - j1) - paired
            removed += (i2 - i1) - paired
        elif op == "insert":
            added += j2 - j1
        elif op == "delete":
            removed += i2 - i1
    return added, changed, removed


def _renames(removed: Mapping[str, str], added: Mapping[str, str], contents: Mapping[str, str]) -> dict[str, str]:
    """``new path -> old path`` for each added document whose content (file hash, ``contents``: revision id -> hash)
    a removed one had: the document was renamed or moved. Paths pair in sorted order, so identical copies pair
    stably; a revision without a known hash pairs with nothing."""
    gone: dict[str, list[str]] = {}
    for path in sorted(removed):
        if (content := contents.get(removed[path])) is not None:
            gone.setdefault(content, []).append(path)
    return {path: gone[content].pop(0) for path in sorted(added)
            if (content := contents.get(added[path])) is not None and gone.get(content)}


def diff_snapshots(
    parent_version: str | None,
    parent_documents: Mapping[str, str],
    documents: Mapping[str, str],
    chunk_hashes: Mapping[str, list[str]],
    contents: Mapping[str, str] | None = None,
) -> SnapshotDiff:
    """Compare two snapshots given as ``path -> revision id`` maps.

    ``chunk_hashes`` maps every revision that differs between them to its chunks' content hashes, ``contents``
    (when given) those revisions to their file's content hash: a document removed at one path and added with the
    same content at another is one ``renamed`` change (at its new path), not a removal and an addition.
    """
    removed = {path: rev for path, rev in parent_documents.items() if path not in documents}
    added = {path: rev for path, rev in documents.items() if path not in parent_documents}
    renamed = _renames(removed, added, contents or {})
    moved_away = set(renamed.values())
    changes: list[DocumentChange] = []
    for path in sorted(set(parent_documents) | set(documents)):
        old, new = parent_documents.get(path), documents.get(path)
        if old == new or path in moved_away:
            continue
        if path in renamed:
            delta = _chunk_delta(chunk_hashes[parent_documents[renamed[path]]], chunk_hashes[new])
            changes.append(DocumentChange(path, "renamed", *delta, renamed_from=renamed[path]))
        elif old is None:
            changes.append(DocumentChange(path, "added", chunks_added=len(chunk_hashes[new])))
        elif new is None:
            changes.append(DocumentChange(path, "removed", chunks_removed=len(chunk_hashes[old])))
        else:
            added_chunks, changed, removed_chunks = _chunk_delta(chunk_hashes[old], chunk_hashes[new])
            changes.append(DocumentChange(path, "changed", added_chunks, changed, removed_chunks))
    return SnapshotDiff(parent_version=parent_version, documents=tuple(changes))


def _stat_cache_delta(
    old: Mapping[str, CachedStat], new: Mapping[str, CachedStat]
) -> tuple[dict[str, CachedStat], set[str]]:
    changed = {path: stat for path, stat in new.items() if old.get(path) != stat}
    return changed, set(old) - set(new)


def continued_version(repo: SnapshotRepository, content_hashes: Collection[str]) -> str | None:
    """The stored version a folder never snapshotted before continues: of the versions sharing with the folder, same
    content, more than half of their documents and more than half of the folder's, the one sharing the most (the
    newest on a tie). A corpus folder copied or moved (``cp -r corpus corpus2``) and edited is the same corpus, so
    its version keeps the lineage, and with it the review decisions, of the one it was copied from; an unrelated
    corpus that happens to hold a few of the same files is not made its descendant, nor is a big folder that holds
    all of a small corpus's one or two files (it would inherit that corpus's accepted items). None when no version
    qualifies."""
    folder = len(content_hashes)
    continued = [(shared, -rank, version) for rank, (version, shared, documents)
                 in enumerate(repo.versions_sharing(content_hashes)) if 2 * shared > max(documents, folder)]
    return max(continued)[2] if continued else None


def current_version(repo: SnapshotRepository, root: str) -> str | None:
    """The version the folder at ``root`` (resolved) held at its last snapshot, else the newest made from it: not
    simply the newest, which after a revert to an earlier version is the one reverted from (a new snapshot was
    diffed against it and took its review decisions, the schedule re-evaluated it)."""
    return repo.current_version(root) or repo.latest_version(root)


def snapshot_corpus(
    root: str | Path,
    config: ChunkerConfig,
    repo: SnapshotRepository,
    expected_version: str | None = None,
) -> SnapshotOutcome:
    """Snapshot ``root``; an unchanged corpus returns the stored snapshot and writes no new rows.

    ``expected_version`` guards a partitioned run: if the files changed after the partition was
    created, the run fails rather than storing other content under that partition's name.
    """
    listing = scan(resolve_root(root), config)
    resolved, walk = str(listing.root), listing.fingerprint(config)
    known = repo.listing_version(resolved, walk)
    existing = repo.get_snapshot(known) if known else None
    if existing is not None:
        _guard_partition(resolved, existing.version_id, expected_version)
        return replace(existing, created=False, files_read=0)

    old_cache = repo.stat_cache(resolved)
    manifest = describe(listing, config, old_cache, chunk=True)
    _guard_partition(resolved, manifest.version_id, expected_version)
    changed_stats, removed_stats = _stat_cache_delta(old_cache, manifest.stat_cache)
    existing = repo.get_snapshot(manifest.version_id)
    if existing is not None:
        repo.update_stat_cache(resolved, changed_stats, removed_stats)
        repo.record_listing(resolved, walk, existing.version_id)
        return replace(existing, created=False, files_read=manifest.files_read)

    documents = {entry.path: entry.revision_id(config) for entry in manifest.entries}
    counts = repo.revision_chunk_counts(set(documents.values()))
    revisions = _new_revisions(manifest, documents, counts, config)
    counts.update({revision.revision_id: len(revision.chunks) for revision in revisions})

    parent = current_version(repo, resolved) or continued_version(repo, manifest.content_hashes())
    parent_documents = repo.document_revisions(parent) if parent else {}
    differing = set(documents.values()) ^ set(parent_documents.values())
    hashes = {revision.revision_id: [c.content_hash for c in revision.chunks] for revision in revisions}
    hashes.update(repo.chunk_hashes(differing - set(hashes)))
    contents = {entry.revision_id(config): entry.content_hash for entry in manifest.entries}
    contents.update(repo.revision_content_hashes(set(parent_documents.values()) - set(documents.values())))

    outcome = SnapshotOutcome(
        version_id=manifest.version_id,
        corpus_root=resolved,
        created=True,
        document_count=len(documents),
        chunk_count=sum(counts[revision_id] for revision_id in documents.values()),
        total_bytes=manifest.total_bytes,
        files_read=manifest.files_read,
        skipped=tuple(manifest.skipped),
        diff=diff_snapshots(parent, parent_documents, documents, hashes, contents),
        chunker=config,
    )
    repo.save_snapshot(outcome, revisions, documents)
    repo.update_stat_cache(resolved, changed_stats, removed_stats)
    repo.record_listing(resolved, walk, outcome.version_id)
    return outcome


def _guard_partition(root: str, version_id: str, expected_version: str | None) -> None:
    """A partitioned run fails rather than store other content under that partition's name."""
    if expected_version and version_id != expected_version:
        raise CorpusError(
            f"the corpus at {root} is now version {version_id}, not {expected_version}: "
            "it changed after this partition was created. Materialize the newer partition instead "
            "(the corpus sensor adds it)."
        )
