"""Walk a corpus root and describe what is on disk, reading only files that changed.

A file whose size and mtime match the stat cache of the last snapshot is trusted without being
opened; anything else is read, hashed and parsed. The corpus version id is a hash of the
manifest (paths and content hashes) and of the chunker config, so it never depends on mtimes:
a fresh clone of the same corpus gets the same version, and so does a file touched without
being changed (it is read again, hashes the same and yields the same version).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.corpus.loaders import loader_for
from rag_assets.corpus.models import (
    CachedStat,
    Chunk,
    ChunkerConfig,
    DocumentMeta,
    ManifestEntry,
    ScannedFile,
    SkippedFile,
    sha256_hex,
)
from rag_assets.corpus.reading import read_files
from rag_assets.errors import CorpusError


@dataclass(frozen=True)
class Listing:
    """What the stat walk saw: candidate files with size and mtime, and files refused up front."""

    root: Path
    files: list[ScannedFile]
    skipped: list[SkippedFile]

    def fingerprint(self, config: ChunkerConfig) -> str:
        """Changes whenever any file might have: a path, size or mtime, a refusal, the config."""
        # NUL-separated, not JSON: a path never holds NUL, and this runs on every unchanged snapshot.
        fields = [config.to_json(), str(len(self.files))]
        fields += [f"{f.path}\0{f.size}\0{f.mtime_ns}" for f in self.files]
        fields += [f"{s.path}\0{s.reason}" for s in self.skipped]
        return sha256_hex("\0".join(fields))[:16]


@dataclass
class Manifest:
    root: str
    version_id: str
    entries: list[ManifestEntry]
    skipped: list[SkippedFile]
    stat_cache: dict[str, CachedStat]
    loaded: dict[str, DocumentMeta] = field(default_factory=dict)
    chunked: dict[str, tuple[Chunk, ...]] = field(default_factory=dict)
    bodies: dict[str, str] = field(default_factory=dict)
    files_read: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.entries)

    def content_hashes(self) -> list[str]:
        """Each document's file content hash: what a copy of the corpus at another path shares with it."""
        return [entry.content_hash for entry in self.entries]


def resolve_root(root: str | Path) -> Path:
    path = Path(root).expanduser()
    if not path.exists():
        raise CorpusError(f"corpus root {path} does not exist (set RAG_ASSETS_CORPUS_ROOT or the corpus resource's root)")
    if not path.is_dir():
        raise CorpusError(f"corpus root {path} is not a folder")
    return path.resolve()


def _symlink_reason(entry: os.DirEntry, root: Path) -> str:
    try:
        target = Path(entry.path).resolve()
    except RuntimeError:  # Python < 3.13 raises this for a loop, not OSError
        return "symbolic link that cannot be resolved (a loop); links are not followed"
    except OSError as exc:
        return f"symbolic link that cannot be resolved ({exc.strerror}); links are not followed"
    if target != root and root not in target.parents:
        return f"symbolic link leading outside the corpus root (to {target}); refused"
    return "symbolic link; links are not followed, so no document is counted twice"


def scan(root: Path, config: ChunkerConfig) -> Listing:
    """List the files a snapshot would consider, and the ones it refuses up front."""
    files: list[ScannedFile] = []
    skipped: list[SkippedFile] = []
    prefix = len(str(root)) + 1
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = entry.path[prefix:].replace(os.sep, "/")
            if entry.is_symlink():
                skipped.append(SkippedFile(rel, _symlink_reason(entry, root)))
            elif entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif not entry.is_file(follow_symlinks=False):
                skipped.append(SkippedFile(rel, "not a regular file"))
            elif loader_for(rel) is None:
                suffix = os.path.splitext(entry.name)[1] or "(none)"
                skipped.append(SkippedFile(rel, f"unsupported file type '{suffix}'"))
            else:
                stat = entry.stat(follow_symlinks=False)
                if stat.st_size > config.max_file_bytes:
                    skipped.append(SkippedFile(
                        rel, f"too large: {stat.st_size:,} bytes > max_file_bytes {config.max_file_bytes:,}"))
                else:
                    files.append(ScannedFile(rel, entry.path, stat.st_size, stat.st_mtime_ns, (stat.st_dev, stat.st_ino)))
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return Listing(root, files, skipped)


def fingerprint(root: str | Path, config: ChunkerConfig) -> str:
    """A cheap stat-only hash of the corpus root: it changes whenever any file might have."""
    return scan(resolve_root(root), config).fingerprint(config)


def corpus_version_id(entries: list[ManifestEntry], config: ChunkerConfig) -> str:
    listing = sorted((entry.path, entry.content_hash) for entry in entries)
    payload = json.dumps([config.fingerprint, listing])
    return "cv-" + sha256_hex(payload)[:12]


def build_manifest(
    root: str | Path, config: ChunkerConfig, cache: Mapping[str, CachedStat], chunk: bool = False
) -> Manifest:
    """Describe the corpus, re-reading only files whose size or mtime differ from ``cache``."""
    return describe(scan(resolve_root(root), config), config, cache, chunk)


def describe(listing: Listing, config: ChunkerConfig, cache: Mapping[str, CachedStat], chunk: bool = False) -> Manifest:
    """The manifest of a stat walk. Files whose size or mtime differ from ``cache`` are read, and
    cut into chunks when ``chunk`` is set (a snapshot needs them; a plan does not)."""
    if not listing.files and not listing.skipped:
        raise CorpusError(f"corpus root {listing.root} is empty: no .md, .txt or .html files found")
    changed = [file for file in listing.files if (cached := cache.get(file.path)) is None
               or (cached.size, cached.mtime_ns) != (file.size, file.mtime_ns)]
    reads = {read.path: read for read in read_files(changed, config, chunk)}
    skipped = list(listing.skipped)
    entries: list[ManifestEntry] = []
    new_cache: dict[str, CachedStat] = {}
    loaded: dict[str, DocumentMeta] = {}
    chunked: dict[str, tuple[Chunk, ...]] = {}
    bodies: dict[str, str] = {}
    for file in listing.files:
        read = reads.get(file.path)
        if read is None:
            cached = cache[file.path]
        elif read.content_hash is None:
            skipped.append(SkippedFile(file.path, str(read.problem)))
            continue
        else:
            cached = CachedStat(file.size, file.mtime_ns, read.content_hash, read.problem)
            if read.meta is not None:
                loaded[file.path] = read.meta
            if read.chunks is not None and read.body is not None:
                chunked[file.path], bodies[file.path] = read.chunks, read.body
        new_cache[file.path] = cached
        if cached.skip_reason:
            skipped.append(SkippedFile(file.path, cached.skip_reason))
        else:
            entries.append(ManifestEntry(file.path, file.size, file.mtime_ns, cached.content_hash))
    if not entries:
        raise CorpusError(
            f"corpus root {listing.root} has no usable document: all {len(skipped)} files were skipped "
            f"(first: {skipped[0].path}: {skipped[0].reason})"
        )
    skipped.sort(key=lambda s: s.path)
    return Manifest(
        root=str(listing.root),
        version_id=corpus_version_id(entries, config),
        entries=entries,
        skipped=skipped,
        stat_cache=new_cache,
        loaded=loaded,
        chunked=chunked,
        bodies=bodies,
        files_read=len(changed),
    )
