"""Retrieval metrics at the granularity of the evidence: hand-computed cases, the overlap rule, token
figures, diversity, and trec_eval (pytrec_eval) on 150 queries where contexts are the labelled units."""

from __future__ import annotations

import math
import random

import pytest

from rag_assets.evidence.spans import EvidenceSpan, Span
from rag_assets.scoring.retrieval import diversity, rank_metrics, redundancy, token_metrics


def unit(name: str) -> Span:
    """A labelled unit as a whole document of ten characters: contexts that are units hit exactly."""
    return Span(name, 0, 10)


def labels(grades: dict[str, float]) -> list[EvidenceSpan]:
    return [EvidenceSpan(name, "rev", 0, 10, "hash", grade) for name, grade in grades.items()]


RUN = [unit(n) for n in "abcde"]
QRELS = labels({"b": 1, "d": 1, "f": 1})


def test_hand_computed_binary_case():
    at3, at5 = rank_metrics(RUN, QRELS, 3), rank_metrics(RUN, QRELS, 5)
    assert at3["precision@3"] == pytest.approx(1 / 3) and at5["precision@5"] == pytest.approx(2 / 5)
    assert at3["recall@3"] == pytest.approx(1 / 3) and at5["recall@5"] == pytest.approx(2 / 3)
    assert at5["mrr@5"] == 0.5 and rank_metrics(RUN, QRELS, 1)["mrr@1"] == 0.0
    assert at5["average_precision"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert at5["ndcg@5"] == pytest.approx(dcg / idcg) == pytest.approx(0.49819, abs=1e-5)
    assert (rank_metrics(RUN, QRELS, 1)["hit_rate@1"], rank_metrics(RUN, QRELS, 2)["hit_rate@2"]) == (0.0, 1.0)


def test_a_context_hits_evidence_it_overlaps_by_half_of_the_shorter_of_the_two():
    evidence = [EvidenceSpan("doc.md", "rev", 100, 200, "h")]
    assert Span("doc.md", 150, 400).hits(evidence[0].span), "50 of the evidence's 100 characters"
    assert not Span("doc.md", 151, 400).hits(evidence[0].span), "49 of 100"
    assert Span("doc.md", 190, 210).hits(evidence[0].span), "10 of the context's 20 characters"
    assert not Span("other.md", 100, 200).hits(evidence[0].span), "another document"
    assert Span("doc.md", 160, 400).hits(evidence[0].span, min_overlap=0.4)
    # A 2,000-character window that holds the evidence hits it: no partial credit for being large.
    assert rank_metrics([Span("doc.md", 0, 2000)], evidence, 5)["hit_rate@5"] == 1.0


def test_hit_rate_is_binary_and_recall_counts_evidence_spans_whatever_the_window_size():
    evidence = [EvidenceSpan("doc.md", "rev", 0, 300, "h"), EvidenceSpan("doc.md", "rev", 1000, 1300, "h")]
    small = [Span("doc.md", 0, 150), Span("doc.md", 150, 300), Span("doc.md", 5000, 5150)]
    large = [Span("doc.md", 0, 2000)]
    assert rank_metrics(small, evidence, 5) == pytest.approx({
        "precision@5": 2 / 5, "recall@5": 0.5, "ndcg@5": 1 / (1 + 1 / math.log2(3)), "mrr@5": 1.0,
        "hit_rate@5": 1.0, "average_precision": (1 / 1) / 2})
    assert rank_metrics(large, evidence, 5)["recall@5"] == 1.0, "one window holding both spans hits both"
    assert rank_metrics(large, evidence, 5)["ndcg@5"] == pytest.approx(1 / (1 + 1 / math.log2(3))), \
        "a rank's gain is one span's grade: nDCG stays at most 1"


def test_the_same_retrieved_text_is_found_or_missed_however_it_is_cut_into_contexts():
    """Evidence is found when what was retrieved covers half of it together: a 1,000-character window holding 216 of
    the evidence's 659 characters misses it, and so do the same 1,000 characters sent as five pieces (one of them
    wholly inside the evidence used to count as a hit, so cutting text smaller raised recall and hit rate)."""
    evidence = [EvidenceSpan("doc.md", "rev", 784, 1443, "h")]
    whole, pieces = [Span("doc.md", 0, 1000)], [Span("doc.md", start, start + 200) for start in range(0, 1000, 200)]
    missed = {"precision@5": 0.0, "recall@5": 0.0, "ndcg@5": 0.0, "mrr@5": 0.0, "hit_rate@5": 0.0,
              "average_precision": 0.0}
    assert rank_metrics(whole, evidence, 5) == missed
    assert rank_metrics(pieces, evidence, 5) == missed


def test_evidence_cut_into_pieces_is_found_at_the_rank_that_brings_back_half_of_it():
    evidence = [EvidenceSpan("doc.md", "rev", 100, 300, "h")]
    whole = [Span("doc.md", 100, 250)]
    pieces = [Span("doc.md", 100, 150), Span("doc.md", 150, 200), Span("doc.md", 200, 250)]
    assert rank_metrics(whole, evidence, 5) == pytest.approx({
        "precision@5": 1 / 5, "recall@5": 1.0, "ndcg@5": 1.0, "mrr@5": 1.0, "hit_rate@5": 1.0,
        "average_precision": 1.0})
    assert rank_metrics(pieces, evidence, 5) == pytest.approx({
        "precision@5": 3 / 5, "recall@5": 1.0, "ndcg@5": 1 / math.log2(3), "mrr@5": 0.5, "hit_rate@5": 1.0,
        "average_precision": 1.0}), "found at rank 2 (100 of 200 characters), every piece a relevant rank"
    assert rank_metrics(pieces[:1], evidence, 5)["hit_rate@5"] == 0.0, "a quarter of the evidence is not found"


def test_the_context_that_completes_a_span_hits_it_however_little_of_it_it_holds():
    """Two contexts each holding 40 of the span's 100 characters find it together (80): the second, at whose rank it
    is found, is a relevant rank though it shares less than half of either; the first is not."""
    evidence = [EvidenceSpan("doc.md", "rev", 100, 200, "h")]
    scores = rank_metrics([Span("doc.md", 0, 140), Span("doc.md", 160, 300)], evidence, 5)
    assert scores == pytest.approx({"precision@5": 1 / 5, "recall@5": 1.0, "ndcg@5": 1 / math.log2(3),
                                    "mrr@5": 0.5, "hit_rate@5": 1.0, "average_precision": 1 / 2})


def test_evidence_read_partly_at_a_page_and_partly_at_its_copy_is_found_as_one_text():
    copy = EvidenceSpan("archive/doc.md", "rev", 1000, 1600, "h")
    evidence = [EvidenceSpan("doc.md", "rev", 0, 600, "h", elsewhere=(copy,))]
    halves = [Span("doc.md", 0, 200), Span("archive/doc.md", 1200, 1400)]
    assert rank_metrics(halves, evidence, 5)["recall@5"] == 1.0, "400 of its 600 characters, 200 at each place"
    assert rank_metrics(halves[:1], evidence, 5)["recall@5"] == 0.0, "a third of it"


def test_graded_ndcg_uses_linear_gain():
    graded = labels({"a": 3, "c": 1})
    assert rank_metrics([unit("c"), unit("a")], graded, 2)["ndcg@2"] == \
        pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert rank_metrics([unit("a"), unit("c")], graded, 2)["ndcg@2"] == pytest.approx(1.0)


def test_a_negative_grade_is_a_gain_of_zero_as_in_trec_eval_and_ranx():
    graded = labels({"a": 2, "b": -1, "c": 1})
    scores = rank_metrics([unit("b"), unit("a"), unit("x")], graded, 3)
    assert scores["ndcg@3"] == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3))) == \
        pytest.approx(0.47962, abs=1e-5)
    assert rank_metrics([unit("b"), unit("x")], labels({"a": 1, "b": -2}), 2)["ndcg@2"] == 0.0
    assert rank_metrics([unit("b"), unit("a")], graded, 2)["precision@2"] == 0.5


def test_missing_ranks_and_contexts_that_could_not_be_located_are_misses():
    assert rank_metrics([unit("b")], labels({"b": 1}), 3)["precision@3"] == pytest.approx(1 / 3)
    assert rank_metrics([None, unit("b")], labels({"b": 1}), 3)["mrr@3"] == 0.5
    assert rank_metrics([], labels({"b": 1}), 3) == {"precision@3": 0.0, "recall@3": 0.0, "ndcg@3": 0.0,
                                                     "mrr@3": 0.0, "hit_rate@3": 0.0, "average_precision": 0.0}


def test_no_relevant_evidence_makes_every_metric_undefined():
    assert all(math.isnan(v) for v in rank_metrics(RUN, [], 3).values())
    assert all(math.isnan(v) for v in token_metrics(RUN, 0, [], 3, lambda path: ()).values())


def test_an_exact_repeat_counts_once_at_its_first_rank():
    assert rank_metrics([unit("b"), unit("b"), unit("d")], labels({"d": 1}), 3)["mrr@3"] == 0.5
    assert rank_metrics([unit("d"), unit("d"), unit("x")], labels({"d": 1}), 3)["precision@3"] == pytest.approx(1 / 3)


def test_token_figures_count_the_words_of_retrieved_and_evidence_spans():
    starts = list(range(0, 1000, 10))  # a word every ten characters: 100 words
    evidence = [EvidenceSpan("doc.md", "rev", 0, 200, "h")]  # words 0-19
    ranked = [Span("doc.md", 100, 400), Span("doc.md", 150, 250)]  # words 10-39, union 100..400
    scores = token_metrics(ranked, 0, evidence, 5, lambda path: starts)
    assert scores == pytest.approx({"token_recall@5": 10 / 20, "token_precision@5": 10 / 30, "token_iou@5": 10 / 40})
    with_unlocated = token_metrics(ranked, 30, evidence, 5, lambda path: starts)
    assert with_unlocated["token_precision@5"] == pytest.approx(10 / 60) and with_unlocated["token_recall@5"] == 0.5


def test_diversity_is_one_for_disjoint_contexts_and_falls_with_repetition():
    a, b = (Span("doc.md", 0, 100), "alpha beta gamma delta"), (Span("doc.md", 100, 200), "epsilon zeta eta theta")
    assert diversity([a, b], 5) == 1.0
    assert redundancy((Span("doc.md", 0, 100), "x"), (Span("doc.md", 50, 300), "y")) == 0.5
    copy = (Span("other.md", 0, 100), "alpha beta gamma delta")
    assert redundancy(a, copy) == 1.0, "near-duplicate text in another document"
    assert diversity([a, b, copy], 5) == pytest.approx(1 - (0 + 1 + 0) / 3)
    assert math.isnan(diversity([a], 5))


def test_the_metrics_equal_trec_eval_on_150_queries():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="dev extra pytrec-eval-terrier not installed")
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(40)]
    qrels, runs = {}, {}
    for q in range(150):
        relevant = rng.sample(docs, rng.randint(1, 6))
        qrels[f"q{q}"] = {d: rng.choice([1, 1, 2, 3]) for d in relevant}
        runs[f"q{q}"] = rng.sample(docs, rng.randint(1, 12))
    k = 5
    measures = {"P_5", "recall_5", "ndcg_cut_5", "map"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(
        {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in runs.items()})
    truncated = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {q: {d: float(len(r) - i) for i, d in enumerate(r[:k])} for q, r in runs.items()})
    for q, ranking in runs.items():
        scores = rank_metrics([unit(d) for d in ranking], labels(qrels[q]), k)
        assert scores["precision@5"] == pytest.approx(expected[q]["P_5"])
        assert scores["recall@5"] == pytest.approx(expected[q]["recall_5"])
        assert scores["ndcg@5"] == pytest.approx(expected[q]["ndcg_cut_5"])
        assert scores["average_precision"] == pytest.approx(expected[q]["map"])
        assert scores["mrr@5"] == pytest.approx(truncated[q]["recip_rank"])
        assert scores["hit_rate@5"] == float(truncated[q]["recip_rank"] > 0)
