"""Send stale golden items back to review, showing the expert what their evidence said and says now.

An evidence span whose text is still in its document stays (re-anchored); one whose text is gone is
looked for in its own document's new body by the locator (normalised or fuzzy, since the text was
edited; never in other documents, where a look-alike passage would mislead): where found, the new
text is shown beside the old and the chunks that hold it become the candidate's relevant chunks. The
expert then confirms the item against the new text (accept or edit) or retires it (reject).
"""

from __future__ import annotations

from dataclasses import replace

from rag_assets.corpus.models import sha256_hex
from rag_assets.evidence.anchor import ChunkIndex
from rag_assets.evidence.documents import Documents
from rag_assets.evidence.locate import Locator
from rag_assets.evidence.spans import EvidenceSpan, Span
from rag_assets.generation.models import Candidate
from rag_assets.golden.repin import Pinning, PinTarget, StaleItem

REQUEUE_PROVIDER = "curation"
REQUEUE_REF = "requeue@2"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _change(span: EvidenceSpan, old: str | None, new: str | None, vanished: bool) -> str:
    """One line of a re-review's note: where the evidence was, what it said, what stands there now, and for a
    passage not found what the review may do, as its import allows it: with no evidence left at all
    (``vanished``) only a rejection, which a review file has no column for new evidence to change."""
    was = f"WAS: {_flat(old)}" if old else "WAS: (its text is no longer stored)"
    if new is not None:
        now = f"NOW: {_flat(new)}"
    elif vanished:
        now = f"NOW: (not found in {span.path}, and no evidence of the item is left: reject it)"
    else:
        now = (f"NOW: (not found in {span.path}; its other evidence stands: accept or edit it against that, "
               "or reject it)")
    return f"{span.path} @{span.start}-{span.end}\n{was}\n{now}"


def requeue_candidates(pinning: Pinning, target: PinTarget) -> list[Candidate]:
    """One pending candidate per stale item of ``pinning``, pinned to the target's corpus version."""
    paths = {span.path for entry in pinning.stale for span in (*entry.kept, *entry.lost)}
    index = ChunkIndex(c for c in target.chunks if c.path in paths)  # only the stale items' documents
    return [_candidate(entry, pinning, target, index) for entry in pinning.stale]


def _located(text: str | None, path: str, documents: Documents) -> Span | None:
    """Where an edited text now stands in its own document, if anywhere."""
    if not text or path not in documents:
        return None
    location = Locator(Documents([documents[path]])).locate(text, path)
    return location.span if location else None


def _candidate(entry: StaleItem, pinning: Pinning, target: PinTarget, index: ChunkIndex) -> Candidate:
    item = entry.item
    found: list[Span] = [e.span for e in entry.kept]
    changes: list[tuple[EvidenceSpan, str | None, str | None]] = []
    for span in entry.lost:
        old = pinning.old_texts.get(span)
        location = _located(old, span.path, pinning.documents)
        if location is not None:
            found.append(location)
        changes.append((span, old, pinning.documents.text(location) if location else None))
    refs = index.covering(found, target.min_overlap)
    candidate = Candidate(
        candidate_id="q-" + sha256_hex("\0".join(["requeue", item.item_id, str(item.revision), target.version,
                                                    *(r.chunk_id for r in refs)]))[:12],
        question=item.question,
        reference_answer=item.reference_answer,
        question_type=item.question_type,
        relevant_chunks=refs,
        source_chunks=refs,
        corpus_version=target.version,
        provider=REQUEUE_PROVIDER,
        model="stale-item",
        prompt_ref=REQUEUE_REF,
        origin_item_id=item.item_id,
    )
    notes = [_change(*change, candidate.evidence_vanished) for change in changes]
    return replace(candidate, change_note="\n".join(notes))
