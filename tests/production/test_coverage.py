"""Coverage gaps: new topics become review candidates, paraphrases of golden questions do not."""

from __future__ import annotations

from datetime import UTC, datetime

from rag_assets.corpus.models import ChunkRef
from rag_assets.golden.models import GoldenItem
from rag_assets.production.coverage import PLACEHOLDER_ANSWER, coverage_gaps, gaps_to_candidates
from rag_assets.production.logs import ProductionQuery
from rag_assets.rag.models import RetrievedChunk
from rag_assets.scoring.embedding import HashingEmbedder

WHEN = datetime(2024, 5, 1, tzinfo=UTC)
GOLDEN = [
    GoldenItem("g1", 1, "factual", "How do I rotate the API key for a workspace?", "In settings.", (), "v1"),
    GoldenItem("g2", 1, "factual", "What is the maximum upload size for attachments?", "25 MB.", (), "v1"),
]


def _query(query_id: str, question: str, answer: str | None = "draft", chunks: tuple[str, ...] = ()) -> ProductionQuery:
    retrieved = tuple(RetrievedChunk(c, f"text {c}", 0.5, i + 1) for i, c in enumerate(chunks))
    return ProductionQuery(query_id, WHEN, question, answer, retrieved)


def test_new_topic_is_a_gap_and_a_paraphrase_is_not() -> None:
    paraphrase = _query("p", "How can I rotate my workspace API key?")
    new_topic = _query("n", "Does the mobile app work offline on Android tablets?", answer="Yes, since 3.2.",
                       chunks=("c-mobile", "c-unknown"))
    gaps = coverage_gaps([paraphrase, new_topic], GOLDEN, HashingEmbedder())
    assert [g.query_id for g in gaps] == ["n"]
    assert gaps[0].similarity < 0.35

    [candidate] = gaps_to_candidates(gaps, "v2", {"n": new_topic, "p": paraphrase}, {"c-mobile": "h-mobile"})
    assert candidate.candidate_id.startswith("q-") and len(candidate.candidate_id) == 14
    assert candidate.question == new_topic.question
    assert candidate.reference_answer == "Yes, since 3.2."
    assert candidate.relevant_chunks == (ChunkRef("c-mobile", "h-mobile"),)  # unknown chunk dropped
    assert (candidate.question_type, candidate.provider, candidate.model, candidate.prompt_ref) == (
        "factual", "production", "coverage-gap", "production@1")
    assert candidate.corpus_version == "v2"


def test_unanswered_gap_gets_a_placeholder_and_ids_are_stable() -> None:
    query = _query("n", "How do I export billing invoices as PDF?", answer=None)
    gaps = coverage_gaps([query], GOLDEN, HashingEmbedder())
    first = gaps_to_candidates(gaps, "v1", {"n": query}, {})
    again = gaps_to_candidates(gaps, "v1", {"n": query}, {})
    assert first == again and first[0].reference_answer == PLACEHOLDER_ANSWER
    assert gaps_to_candidates(gaps, "v2", {"n": query}, {})[0].candidate_id != first[0].candidate_id
