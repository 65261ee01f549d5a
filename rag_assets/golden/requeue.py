"""Send stale golden items back to review, pointing at where their evidence went.

A relevant chunk that is unchanged stays; one that changed is looked for among the new chunks of
the same document by text (the edited chunk usually keeps most of its words). The expert then
confirms the item against the new text (accept or edit) or retires it (reject).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.corpus.models import ChunkRef, SnapshotChunk, sha256_hex
from rag_assets.generation.models import Candidate
from rag_assets.golden.build import StaleItem
from rag_assets.corpus.mapping import map_texts_to_chunks

REQUEUE_PROVIDER = "curation"
REQUEUE_REF = "requeue@1"


def requeue_candidates(
    stale: Sequence[StaleItem],
    chunks: Sequence[SnapshotChunk],
    old_chunks: Mapping[str, tuple[str, str]],
    corpus_version: str,
    min_overlap: float = 0.5,
) -> list[Candidate]:
    """One pending candidate per stale item, pinned to ``corpus_version``.

    ``old_chunks`` maps each vanished chunk id to its (path, text) in the version it came from.
    """
    by_path: dict[str, list[SnapshotChunk]] = {}
    for chunk in chunks:
        by_path.setdefault(chunk.path, []).append(chunk)
    current = {c.chunk_id: c.content_hash for c in chunks}
    candidates = []
    for entry in stale:
        item = entry.item
        relevant: list[ChunkRef] = []
        for ref in item.relevant_chunks:
            if current.get(ref.chunk_id) == ref.content_hash:
                relevant.append(ref)
            elif ref.chunk_id in old_chunks:
                path, text = old_chunks[ref.chunk_id]
                relevant.extend(map_texts_to_chunks([text], by_path.get(path, []), min_overlap=min_overlap)[0])
        refs = tuple(dict.fromkeys(relevant))
        candidates.append(Candidate(
            candidate_id="q-" + sha256_hex("\0".join(["requeue", item.item_id, str(item.revision), corpus_version,
                                                        *(r.chunk_id for r in refs)]))[:12],
            question=item.question,
            reference_answer=item.reference_answer,
            question_type=item.question_type,
            relevant_chunks=refs,
            source_chunks=refs,
            corpus_version=corpus_version,
            provider=REQUEUE_PROVIDER,
            model="stale-item",
            prompt_ref=REQUEUE_REF,
            origin_item_id=item.item_id,
        ))
    return candidates
