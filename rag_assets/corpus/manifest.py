"""Walk a corpus root and describe what is on disk, reading only files that changed.

A file whose size and mtime match the stat cache of the last snapshot is trusted without being
opened; anything else is read, hashed and parsed. The corpus version id is a hash of the
manifest (paths and content hashes) and of the chunker config, so it never depends on mtimes:
a fresh clone of the same corpus gets the same version.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.corpus.loaders import LoaderError, loader_for
from rag_assets.corpus.models import (
    CachedStat,
    ChunkerConfig,
    LoadedDocument,
    ManifestEntry,
    SkippedFile,
    sha256_hex,
)
from rag_assets.errors import CorpusError
from rag_assets.text.control import control_character_problem

@dataclass(frozen=True)
class ScannedFile:
    path: str
    abs_path: str
    size: int
    mtime_ns: int


@dataclass
class Manifest:
    root: str
    version_id: str
    entries: list[ManifestEntry]
    skipped: list[SkippedFile]
    stat_cache: dict[str, CachedStat]
    loaded: dict[str, LoadedDocument] = field(default_factory=dict)
    files_read: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.entries)


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
    except OSError as exc:
        return f"symbolic link that cannot be resolved ({exc.strerror}); links are not followed"
    if target != root and root not in target.parents:
        return f"symbolic link leading outside the corpus root (to {target}); refused"
    return "symbolic link; links are not followed, so no document is counted twice"


def scan(root: Path, config: ChunkerConfig) -> tuple[list[ScannedFile], list[SkippedFile]]:
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
                    files.append(ScannedFile(rel, entry.path, stat.st_size, stat.st_mtime_ns))
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return files, skipped


def fingerprint(root: str | Path, config: ChunkerConfig) -> str:
    """A cheap stat-only hash of the corpus root: it changes whenever any file might have."""
    files, skipped = scan(resolve_root(root), config)
    listing = [(f.path, f.size, f.mtime_ns) for f in files] + [(s.path, s.reason) for s in skipped]
    return sha256_hex(json.dumps([config.to_json(), listing]))[:16]


def decode_document(data: bytes, path: str) -> LoadedDocument:
    """Bytes to a loaded document; raises LoaderError with the reason it cannot be used."""
    if not data.strip():
        raise LoaderError("empty file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoaderError(f"not valid UTF-8 (invalid byte at offset {exc.start})") from exc
    problem = control_character_problem(text)
    if problem:
        raise LoaderError(f"{problem}: a binary or damaged file, not text")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    loader = loader_for(path)
    assert loader is not None, "scan() only yields files with a loader"
    document = loader(text, path)
    if not document.body.strip():
        raise LoaderError("empty document: no text after front matter or markup")
    return document


def read_document(root: str | Path, path: str) -> tuple[str, LoadedDocument]:
    """Read one file again (for a document whose chunks are needed); returns (hash, document)."""
    data = (Path(root) / path).read_bytes()
    return sha256_hex(data), decode_document(data, path)


def corpus_version_id(entries: list[ManifestEntry], config: ChunkerConfig) -> str:
    listing = sorted((entry.path, entry.content_hash) for entry in entries)
    payload = json.dumps([config.fingerprint, listing])
    return "cv-" + sha256_hex(payload)[:12]


def build_manifest(
    root: str | Path, config: ChunkerConfig, cache: Mapping[str, CachedStat]
) -> Manifest:
    """Describe the corpus, re-reading only files whose size or mtime differ from ``cache``."""
    resolved = resolve_root(root)
    files, skipped = scan(resolved, config)
    if not files and not skipped:
        raise CorpusError(f"corpus root {resolved} is empty: no .md, .txt or .html files found")
    entries: list[ManifestEntry] = []
    new_cache: dict[str, CachedStat] = {}
    loaded: dict[str, LoadedDocument] = {}
    files_read = 0
    for file in files:
        cached = cache.get(file.path)
        if cached is None or (cached.size, cached.mtime_ns) != (file.size, file.mtime_ns):
            files_read += 1
            try:
                data = Path(file.abs_path).read_bytes()
            except OSError as exc:
                skipped.append(SkippedFile(file.path, f"cannot be read: {exc.strerror}"))
                continue
            content_hash, reason = sha256_hex(data), None
            try:
                loaded[file.path] = decode_document(data, file.path)
            except LoaderError as exc:
                reason = str(exc)
            cached = CachedStat(file.size, file.mtime_ns, content_hash, reason)
        new_cache[file.path] = cached
        if cached.skip_reason:
            skipped.append(SkippedFile(file.path, cached.skip_reason))
        else:
            entries.append(ManifestEntry(file.path, file.size, file.mtime_ns, cached.content_hash))
    if not entries:
        raise CorpusError(
            f"corpus root {resolved} has no usable document: all {len(skipped)} files were skipped "
            f"(first: {skipped[0].path}: {skipped[0].reason})"
        )
    skipped.sort(key=lambda s: s.path)
    return Manifest(
        root=str(resolved),
        version_id=corpus_version_id(entries, config),
        entries=entries,
        skipped=skipped,
        stat_cache=new_cache,
        loaded=loaded,
        files_read=files_read,
    )
