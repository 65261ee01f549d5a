"""Golden-set coverage gaps: what users ask that no golden item resembles.

A golden set drawn from the documentation can miss whole topics users care about; a drop in
production quality on such questions would never show in the offline evaluation. A production
question whose best cosine similarity to every golden question is below a threshold is a gap,
and becomes a pending review candidate so an expert can turn it into a golden item.

The default embedder (hashing) measures shared words and word pieces, so the threshold of 0.35
separates "about the same things" (paraphrases score well above) from new topics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.corpus.models import ChunkRef, sha256_hex
from rag_assets.generation.models import Candidate, QuestionType
from rag_assets.golden.models import GoldenItem
from rag_assets.production.logs import ProductionQuery
from rag_assets.scoring.embedding import Embedder

#: Questions embedded at once: 1,000 rows of the hashing embedder's 4,096 floats are 33 MB.
EMBED_BATCH = 1000
#: What review sees when production served no answer: review rules reject an empty reference.
PLACEHOLDER_ANSWER = "(to be written by the reviewer)"


@dataclass(frozen=True)
class CoverageGap:
    query_id: str
    question: str
    best_item_id: str | None  # the closest golden item; None when the golden set is empty
    similarity: float


def coverage_gaps(questions: Sequence[ProductionQuery], golden: Sequence[GoldenItem], embedder: Embedder,
                  threshold: float = 0.35) -> list[CoverageGap]:
    """Production questions unlike every golden question, most dissimilar first."""
    if not golden:
        return sorted((CoverageGap(q.query_id, q.question, None, 0.0) for q in questions),
                      key=lambda gap: (gap.similarity, gap.query_id))
    references = embedder.embed([item.question for item in golden]).T
    gaps = []
    for start in range(0, len(questions), EMBED_BATCH):  # a day's questions at once would be rows x 4,096 floats
        batch = questions[start:start + EMBED_BATCH]
        similarities = embedder.embed([q.question for q in batch]) @ references
        for query, column, row in zip(batch, similarities.argmax(axis=1), similarities):
            if row[column] < threshold:
                gaps.append(CoverageGap(query.query_id, query.question, golden[column].item_id, float(row[column])))
    return sorted(gaps, key=lambda gap: (gap.similarity, gap.query_id))


def candidate_id(question: str, corpus_version: str) -> str:
    """Same question on the same corpus version -> same id, so a gap seen on many days is queued once."""
    return "q-" + sha256_hex(" ".join(question.lower().split()) + "\0" + corpus_version)[:12]


def gaps_to_candidates(gaps: Sequence[CoverageGap], corpus_version: str,
                       retrieved_by_query: Mapping[str, ProductionQuery],
                       content_hashes: Mapping[str, str]) -> list[Candidate]:
    """Pending review candidates for ``gaps``.

    ``retrieved_by_query`` maps query id -> the production record (its retrieval and answer);
    ``content_hashes`` maps chunk id -> content hash in ``corpus_version``. Retrieved chunks missing
    from that version are dropped: a candidate can only pin chunks that exist. The production
    answer is a draft reference (the reviewer corrects it), and the retrieved chunks are a draft of
    the relevant ones (the reviewer prunes them). Duplicate questions give one candidate.
    """
    candidates: dict[str, Candidate] = {}
    for gap in gaps:
        record = retrieved_by_query.get(gap.query_id)
        retrieved = record.retrieved if record else ()
        refs = tuple(dict.fromkeys(ChunkRef(chunk.chunk_id, content_hashes[chunk.chunk_id])
                                   for chunk in retrieved if chunk.chunk_id in content_hashes))
        answer = record.answer if record and record.answer and record.answer.strip() else PLACEHOLDER_ANSWER
        cid = candidate_id(gap.question, corpus_version)
        candidates.setdefault(cid, Candidate(
            candidate_id=cid, question=gap.question, reference_answer=answer,
            question_type=QuestionType.FACTUAL.value, relevant_chunks=refs, source_chunks=refs,
            corpus_version=corpus_version, provider="production", model="coverage-gap", prompt_ref="production@1",
        ))
    return list(candidates.values())
