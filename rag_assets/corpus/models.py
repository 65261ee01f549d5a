"""Value objects of a corpus snapshot.

They are frozen so that a snapshot, once taken, cannot be edited on its way to the store.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import cached_property



# Bump when loaders or chunking change what the same bytes turn into: it enters every chunk id
# and corpus version, so old snapshots stay as they were and new ones are cut anew.
SNAPSHOT_FORMAT = 1


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ChunkerConfig:
    """How documents are cut into chunks; part of every chunk id and of the corpus version."""

    target_chars: int = 1200
    overlap_chars: int = 150
    min_chars: int = 300
    max_file_bytes: int = 5_000_000

    def __post_init__(self) -> None:
        if self.target_chars < 100:
            raise ValueError(f"target_chars must be at least 100, got {self.target_chars}")
        if not 0 <= self.overlap_chars < self.target_chars // 2:
            raise ValueError(
                f"overlap_chars must be between 0 and half of target_chars "
                f"({self.target_chars // 2}), got {self.overlap_chars}"
            )
        if not 0 <= self.min_chars <= self.target_chars:
            raise ValueError(f"min_chars must be between 0 and target_chars, got {self.min_chars}")
        if self.max_file_bytes < 1:
            raise ValueError(f"max_file_bytes must be positive, got {self.max_file_bytes}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @cached_property
    def fingerprint(self) -> str:
        """Hash of the settings that shape chunks (the file size limit does not)."""
        shaping = {k: v for k, v in asdict(self).items() if k != "max_file_bytes"}
        return sha256_hex(json.dumps([SNAPSHOT_FORMAT, shaping], sort_keys=True))[:16]


@dataclass(frozen=True)
class DocumentMeta:
    """What a loader tells about a document besides its text."""

    title: str
    version: str | None
    date: str | None
    kind: str


@dataclass(frozen=True)
class LoadedDocument:
    """A document reduced to text: ``body`` is what chunk offsets point into."""

    meta: DocumentMeta
    body: str


@dataclass(frozen=True)
class Chunk:
    """A span of a document body. ``start``/``end`` are character offsets into the body."""

    chunk_id: str
    path: str
    ordinal: int
    start: int
    end: int
    text: str
    heading: str
    content_hash: str


@dataclass(frozen=True)
class ChunkRef:
    """A chunk as a question pins it: its id and the hash of its text at that time."""

    chunk_id: str
    content_hash: str


@dataclass(frozen=True)
class SnapshotChunk:
    """A chunk of a snapshot with what later stages need of its document (title, version, date), and
    where it lies in the document's body (``start``/``end``: character offsets)."""

    chunk_id: str
    content_hash: str
    path: str
    title: str
    doc_version: str | None
    doc_date: str | None
    heading: str
    text: str
    start: int
    end: int

    @property
    def ref(self) -> ChunkRef:
        return ChunkRef(self.chunk_id, self.content_hash)


@dataclass(frozen=True)
class ManifestEntry:
    """One document of the corpus as it stands on disk."""

    path: str
    size: int
    mtime_ns: int
    content_hash: str

    def revision_id(self, chunker: ChunkerConfig) -> str:
        """Identity of this document's chunks: same path, content and chunker give same chunks."""
        return sha256_hex(f"{self.path}\0{self.content_hash}\0{chunker.fingerprint}")[:24]


@dataclass(frozen=True)
class ScannedFile:
    """A candidate file as the stat walk saw it, before anything is read.

    ``identity`` is the ``(st_dev, st_ino)`` the walk saw: the read refuses another file found
    there by then (see ``rag_assets.files``); None when the file was not just walked.
    """

    path: str
    abs_path: str
    size: int
    mtime_ns: int
    identity: tuple[int, int] | None = None


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class CachedStat:
    """What the last snapshot learned about a file, so an unchanged file is not read again."""

    size: int
    mtime_ns: int
    content_hash: str
    skip_reason: str | None = None


@dataclass(frozen=True)
class DocumentRevision:
    """A document's content at one version: its body (what chunk offsets point into) and chunks."""

    revision_id: str
    entry: ManifestEntry
    meta: DocumentMeta
    chunks: tuple[Chunk, ...]
    body: str

    @cached_property
    def body_hash(self) -> str:
        """The body's identity in the store: one copy per distinct body, whatever its path or chunker."""
        return sha256_hex(self.body)


@dataclass(frozen=True)
class DocumentChange:
    path: str
    change: str  # added | changed | removed | renamed (the same content at a new path: ``renamed_from`` is the old)
    chunks_added: int = 0
    chunks_changed: int = 0
    chunks_removed: int = 0
    renamed_from: str | None = None

    @property
    def shown_path(self) -> str:
        """The path as a diff shows it: ``old -> new`` for a renamed document."""
        return f"{self.renamed_from} -> {self.path}" if self.renamed_from else self.path


@dataclass(frozen=True)
class SnapshotDiff:
    """What changed against the parent snapshot (everything is "added" for the first one)."""

    parent_version: str | None
    documents: tuple[DocumentChange, ...] = ()

    def count(self, change: str) -> int:
        return sum(1 for d in self.documents if d.change == change)

    def chunk_total(self, attribute: str) -> int:
        return sum(getattr(d, attribute) for d in self.documents)


@dataclass(frozen=True)
class SnapshotOutcome:
    """The result of snapshotting a corpus root once."""

    version_id: str
    corpus_root: str
    created: bool
    document_count: int
    chunk_count: int
    total_bytes: int
    files_read: int
    skipped: tuple[SkippedFile, ...]
    diff: SnapshotDiff
    chunker: ChunkerConfig = field(default_factory=ChunkerConfig)
