"""Retrieval metrics on hand-computed cases, and against trec_eval (pytrec_eval) on 150 queries."""

from __future__ import annotations

import math
import random

import pytest

from rag_assets.scoring.retrieval import (
    average_precision, hit_rate_at_k, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank, retrieval_scores,
)

RUN = ["a", "b", "c", "d", "e"]
QRELS = {"b": 1, "d": 1, "f": 1}


def test_hand_computed_binary_case():
    assert precision_at_k(RUN, QRELS, 3) == pytest.approx(1 / 3)
    assert precision_at_k(RUN, QRELS, 5) == pytest.approx(2 / 5)
    assert recall_at_k(RUN, QRELS, 3) == pytest.approx(1 / 3)
    assert recall_at_k(RUN, QRELS, 5) == pytest.approx(2 / 3)
    assert reciprocal_rank(RUN, QRELS) == 0.5
    assert reciprocal_rank(RUN, QRELS, k=1) == 0.0
    assert average_precision(RUN, QRELS) == pytest.approx((1 / 2 + 2 / 4) / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(RUN, QRELS, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(RUN, QRELS, 5) == pytest.approx(0.49819, abs=1e-5)
    assert (hit_rate_at_k(RUN, QRELS, 1), hit_rate_at_k(RUN, QRELS, 2)) == (0.0, 1.0)


def test_graded_ndcg_uses_linear_gain():
    assert ndcg_at_k(["c", "a"], {"a": 3, "c": 1}, 2) == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert ndcg_at_k(["a", "c"], {"a": 3, "c": 1}, 2) == pytest.approx(1.0)


def test_a_negative_grade_is_a_gain_of_zero_as_in_trec_eval_and_ranx():
    graded = {"a": 2, "b": -1, "c": 1}
    dcg, idcg = 2 / math.log2(3), 2 + 1 / math.log2(3)
    assert ndcg_at_k(["b", "a", "x"], graded, 3) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["b", "a", "x"], graded, 3) == pytest.approx(0.47962, abs=1e-5)
    assert ndcg_at_k(["b", "x"], {"a": 1, "b": -2}, 2) == 0.0, "a harmful chunk never makes nDCG negative"
    assert precision_at_k(["b", "a"], graded, 2) == 0.5 and reciprocal_rank(["b", "a"], graded) == 0.5


def test_fewer_than_k_retrieved_counts_the_missing_ranks_as_misses():
    assert precision_at_k(["b"], {"b": 1}, 3) == pytest.approx(1 / 3)
    assert recall_at_k(["b"], {"b": 1}, 3) == 1.0
    assert ndcg_at_k([], {"b": 1}, 3) == 0.0 and average_precision([], {"b": 1}) == 0.0


def test_no_relevant_items_makes_every_metric_undefined():
    scores = retrieval_scores(RUN, {}, 3)
    assert all(math.isnan(v) for v in scores.values())


def test_a_duplicate_in_the_ranking_counts_once_at_its_first_rank():
    assert reciprocal_rank(["b", "b", "d"], {"d": 1}) == 0.5
    assert precision_at_k(["d", "d", "x"], {"d": 1}, 3) == pytest.approx(1 / 3)


def test_average_precision_can_be_cut_at_k():
    assert average_precision(RUN, QRELS, k=3) == pytest.approx((1 / 2) / 3)


def test_the_metrics_equal_trec_eval_on_150_queries():
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="dev extra pytrec-eval-terrier not installed")
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(40)]
    qrels, runs = {}, {}
    for q in range(150):
        relevant = rng.sample(docs, rng.randint(1, 6))
        qrels[f"q{q}"] = {d: rng.choice([1, 1, 2, 3]) for d in relevant}
        ranking = rng.sample(docs, rng.randint(1, 12))
        runs[f"q{q}"] = ranking
    k = 5
    measures = {"P_5", "recall_5", "ndcg_cut_5", "map", "map_cut_5"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(
        {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in runs.items()})
    truncated = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {q: {d: float(len(r) - i) for i, d in enumerate(r[:k])} for q, r in runs.items()})
    for q, ranking in runs.items():
        grades = qrels[q]
        assert precision_at_k(ranking, grades, k) == pytest.approx(expected[q]["P_5"])
        assert recall_at_k(ranking, grades, k) == pytest.approx(expected[q]["recall_5"])
        assert ndcg_at_k(ranking, grades, k) == pytest.approx(expected[q]["ndcg_cut_5"])
        assert average_precision(ranking, grades) == pytest.approx(expected[q]["map"])
        assert average_precision(ranking, grades, k) == pytest.approx(expected[q]["map_cut_5"])
        assert reciprocal_rank(ranking, grades, k) == pytest.approx(truncated[q]["recip_rank"])
