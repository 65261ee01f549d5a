"""The document bodies of one pinned corpus revision: what evidence and retrieved contexts are spans of.

A stored snapshot gives the bodies it keeps (``document_body``); a revision saved before the body
store has none, and its body is rebuilt from its chunks, which are exact slices of it: exact wherever
a chunk covers it, a space for each character between chunks (the chunker only drops whitespace
there). Without a corpus, the reference contexts of a golden set are the documents, one each.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from rag_assets.corpus.models import SnapshotChunk, sha256_hex
from rag_assets.evidence.spans import EvidenceSpan, Span
from rag_assets.text.tokens import token_spans


@dataclass(frozen=True)
class Document:
    """A document's body at one revision, and the version its metadata names (None: none)."""

    path: str
    body: str
    version: str | None = None

    @cached_property
    def revision(self) -> str:
        """The body's hash: what an evidence span's offsets are valid for."""
        return sha256_hex(self.body)

    @cached_property
    def tokens(self) -> list[tuple[int, int]]:
        return token_spans(self.body)

    @cached_property
    def words(self) -> list[str]:
        """The body's words, lower case, one per token (what the locator compares)."""
        return [self.body[start:end].lower() for start, end in self.tokens]

    @cached_property
    def token_starts(self) -> list[int]:
        return [start for start, _ in self.tokens]


def rebuilt_body(chunks: Sequence[SnapshotChunk]) -> str:
    """A document's body from its chunks (in reading order): each chunk's text at its offsets, spaces
    between them."""
    out: list[str] = []
    cursor = 0
    for chunk in sorted(chunks, key=lambda c: c.start):
        if chunk.end <= cursor:
            continue
        out.append(" " * max(0, chunk.start - cursor))
        out.append(chunk.text[max(0, cursor - chunk.start):])
        cursor = chunk.end
    return "".join(out)


class Documents(Mapping[str, Document]):
    """Bodies by path, with the spans and evidence made from them."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self._by_path = {d.path: d for d in documents}

    @classmethod
    def of(cls, bodies: Mapping[str, str], versions: Mapping[str, str | None] | None = None) -> Documents:
        """Documents from ``bodies`` (path -> body), with their ``versions`` (path -> version) where given."""
        versions = versions or {}
        return cls(Document(path, body, versions.get(path)) for path, body in bodies.items())

    @classmethod
    def from_chunks(cls, chunks: Sequence[SnapshotChunk], bodies: Mapping[str, str] | None = None,
                    versions: Mapping[str, str | None] | None = None) -> Documents:
        """``bodies`` (path -> body), and the documents of ``chunks`` they lack, rebuilt from the chunks; each
        document's version from ``versions``, else from its chunks."""
        by_path: dict[str, list[SnapshotChunk]] = {}
        for chunk in chunks:
            by_path.setdefault(chunk.path, []).append(chunk)
        known = dict(bodies or {})
        known.update({path: rebuilt_body(found) for path, found in by_path.items() if path not in known})
        return cls.of(known, {**{c.path: c.doc_version for c in chunks}, **(versions or {})})

    def __getitem__(self, path: str) -> Document:
        return self._by_path[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_path)

    def __len__(self) -> int:
        return len(self._by_path)

    @property
    def versions(self) -> dict[str, str | None]:
        """Path -> the version of the document, for every document."""
        return {path: document.version for path, document in self._by_path.items()}

    def text(self, span: Span) -> str:
        return self._by_path[span.path].body[span.start:span.end]

    def evidence(self, span: Span, grade: float = 1.0, elsewhere: Iterable[Span] = ()) -> EvidenceSpan:
        """``span`` pinned to this revision of its document, with the other places its text occurs (``elsewhere``)
        pinned to theirs."""
        document = self._by_path[span.path]
        return EvidenceSpan(span.path, document.revision, span.start, span.end,
                            sha256_hex(document.body[span.start:span.end]), grade,
                            tuple(self.evidence(other) for other in elsewhere))

    def token_starts(self, path: str) -> Sequence[int]:
        document = self._by_path.get(path)
        return document.token_starts if document is not None else ()
