"""Golden items, their revisions, and golden-set versions."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_assets.corpus.models import ChunkRef
from rag_assets.evidence.spans import EvidenceSpan


#: The origin of a generated item an expert accepted (or edited).
REVIEWED_ORIGIN = "generated"
#: The origin of a generated item accepted without review (trial mode, :mod:`rag_assets.curation.accept_all`).
UNREVIEWED_ORIGIN = "generated:unreviewed"


@dataclass(frozen=True)
class ExternalItem:
    """A question from a golden set made elsewhere (anthropic_docs format, ragas test set).

    ``relevant_texts`` are the texts of the chunks that answer it in the external corpus; they are
    mapped onto snapshot chunks by text, because external chunk ids mean nothing to a snapshot.
    """

    external_id: str
    question: str
    reference_answer: str
    question_type: str = "factual"
    relevant_texts: tuple[str, ...] = ()
    external_chunk_ids: tuple[str, ...] = ()
    # The corpus file each text is in, where the format says (anthropic_docs: one file per labelled
    # chunk, see json_chunks_to_corpus): a text repeated in another document is then found in its own.
    relevant_sources: tuple[str, ...] = ()
    # Where the item is in the file it was read from, as the reader's own errors say it (``row 7 (line 9)``,
    # ``item 3 (id 'q7')``), and the field of its ``relevant_texts`` there: what a message about an item that cannot
    # be pinned names. Not part of what the item is (the same item read from a CSV or a JSONL file is equal).
    location: str = field(default="", compare=False)
    # The file gave no id: ``external_id`` is a hash of question and reference (``content_id``), so the question
    # is what says which item it is (a corrected reference comes under a new id). Not part of what the item is.
    derived_id: bool = field(default=False, compare=False)
    texts_field: str = field(default="reference_contexts", compare=False)


@dataclass(frozen=True)
class GoldenItem:
    """One item as it stands in a golden-set version (a given revision, pinned to one corpus version)."""

    item_id: str
    revision: int
    question_type: str
    question: str
    reference_answer: str
    relevant_chunks: tuple[ChunkRef, ...]
    corpus_version: str
    origin: str = REVIEWED_ORIGIN
    reference_statements: tuple[str, ...] = field(default=())
    # Where the answer is, as spans of the pinned revision; empty: the spans of ``relevant_chunks``.
    evidence: tuple[EvidenceSpan, ...] = field(default=())


@dataclass(frozen=True)
class Replaced:
    """An accepted imported item whose question a later import asked with another reference: the item's
    ``revision`` holds ``reference`` now, where it held ``was``; ``location`` is the row of the file that asked."""

    item_id: str
    location: str
    was: str
    reference: str
    revision: int
