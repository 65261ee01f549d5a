"""Pin items of a golden set made elsewhere to a corpus revision: each reference text (a labelled
chunk, a ragas reference context) is located in the revision's documents as an evidence span, so
retrieval is later counted at the granularity of those labels, whatever anyone's chunking.

One locator (``rag_assets.evidence.locate``) serves the importers and the RAG run. A text found
nowhere is an error naming the item and the text, never a silent drop: an item pinned to less than
its labels would score its misses as hits or its hits as misses. A text found in several places (a
page and its archived copy) is one piece of evidence pinned at the place the locator prefers, with
the others kept ``elsewhere``: a system that retrieves any copy of it is credited.

Domain code: no Dagster, no SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.corpus.models import ChunkRef, SnapshotChunk
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.locate import DEFAULT_MIN_SCORE, Locator
from rag_assets.evidence.spans import EvidenceSpan, Span
from rag_assets.generation.models import QuestionType
from rag_assets.golden.models import ExternalItem

EXCERPT = 60


@dataclass(frozen=True)
class PinnedItem:
    """An external item with its evidence spans and the snapshot chunks they touch (shown to reviewers
    and the reference system's citations; figures read the spans)."""

    item: ExternalItem
    refs: tuple[ChunkRef, ...]
    evidence: tuple[EvidenceSpan, ...]


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:EXCERPT] + ("..." if len(flat) > EXCERPT else ""))


def chunks_touching(evidence: Sequence[EvidenceSpan], chunks: Sequence[SnapshotChunk]) -> tuple[ChunkRef, ...]:
    """The snapshot chunks that hit any of the spans (the overlap rule of the retrieval metrics)."""
    targets = [e.span for e in evidence]
    return tuple(c.ref for c in chunks if any(Span.of(c).hits(t) for t in targets))


def _source(item: ExternalItem, n: int) -> str | None:
    return item.relevant_sources[n] if n < len(item.relevant_sources) else None


def refused_without_texts(item: ExternalItem) -> str | None:
    """Why ``item`` cannot be pinned whatever the corpus (None: it can be looked for): it has no reference texts and
    its file does not say it is unanswerable. An adversarial item (question type ``adversarial``, from the file's
    ``question_type`` column, read in lower case, or its ``synthesizer_name``, both of which the ragas export writes)
    has no evidence by design: it is pinned to nothing and scored on declining. An unmarked item without texts is a
    data problem, and every entry point (the import command, ``rag_assets.evaluate``) refuses it by this one rule
    rather than guess, saying how to mark it: taken for adversarial it would turn a factual question into a decline
    test."""
    if item.relevant_texts or item.question_type == QuestionType.ADVERSARIAL.value:
        return None
    return ("has no reference contexts to locate (mark it question_type: adversarial if nothing in the corpus "
            "answers it)")


def pin_external_items(items: Sequence[ExternalItem], documents: Documents, chunks: Sequence[SnapshotChunk], *,
                       min_score: float = DEFAULT_MIN_SCORE) -> tuple[list[PinnedItem], list[tuple[ExternalItem, str]]]:
    """(items pinned by their located texts, items left out with why): an item is pinned only when
    every one of its texts is found, an adversarial item without texts to nothing (``refused_without_texts``);
    texts shared by items are located once."""
    locator = Locator(documents, min_score)
    distinct = dict.fromkeys((text, _source(item, n)) for item in items for n, text in enumerate(item.relevant_texts))
    found = {key: locator.locate(*key) for key in distinct}
    pinned: list[PinnedItem] = []
    left: list[tuple[ExternalItem, str]] = []
    for item in items:
        refused = refused_without_texts(item)
        if refused is not None:
            left.append((item, refused))
            continue
        if not item.relevant_texts:
            pinned.append(PinnedItem(item, (), ()))
            continue
        keys = [(text, _source(item, n)) for n, text in enumerate(item.relevant_texts)]
        lost = [n for n, key in enumerate(keys) if found[key] is None]
        if lost:
            left.append((item, "; ".join(f"{item.texts_field}[{n}] is not in any document "
                                         f"({_excerpt(item.relevant_texts[n])})" for n in lost)))
            continue
        evidence = tuple(dict.fromkeys(documents.evidence(found[key].span, elsewhere=found[key].elsewhere)
                                       for key in keys))
        pinned.append(PinnedItem(item, chunks_touching(evidence, chunks), evidence))
    return pinned, left
