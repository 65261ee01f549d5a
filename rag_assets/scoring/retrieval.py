"""Retrieval metrics from golden labels, with trec_eval's definitions.

Conventions (those of trec_eval, so figures compare with pytrec_eval and ranx):
- ``retrieved`` is the ranked list the system returned; ``relevance`` maps relevant chunk ids to
  a grade (1 for binary labels). Duplicate ids in a ranking count once, at their first rank.
- precision@k divides by k even when fewer than k were retrieved (missing ranks are misses).
- every metric is undefined for a query with no relevant items
  (an adversarial question): they return NaN and aggregates leave such queries out, as trec_eval
  skips topics without relevance judgments.
- MRR@k is the reciprocal rank of the first relevant item within the top k, 0 if none.
- nDCG@k uses trec_eval's linear gain (the grade) and log2(rank + 1) discount; the ideal ranking
  sorts all judged items by grade. A negative grade (judged harmful) is a gain of 0, as in trec_eval
  and ranx: it never subtracts, so nDCG stays in [0, 1].
- hit rate@k is 1 if any relevant item is in the top k.
- average precision is over the whole ranking (trec_eval ``map``); ``average_precision(k=...)``
  truncates it (``map_cut``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

NAN = float("nan")


def _ranked(retrieved: Sequence[str], k: int | None) -> list[str]:
    unique = list(dict.fromkeys(retrieved))
    return unique if k is None else unique[:k]


def _gains(retrieved: Sequence[str], relevance: Mapping[str, float], k: int | None) -> np.ndarray:
    """The gain at each rank: the grade, a negative grade counting 0 (trec_eval, ranx)."""
    return np.array([max(0.0, float(relevance.get(chunk_id, 0.0))) for chunk_id in _ranked(retrieved, k)], dtype=float)


def precision_at_k(retrieved: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    if not any(grade > 0 for grade in relevance.values()):
        return NAN
    return float(np.count_nonzero(_gains(retrieved, relevance, k) > 0)) / k


def recall_at_k(retrieved: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    relevant = sum(1 for grade in relevance.values() if grade > 0)
    if relevant == 0:
        return NAN
    return float(np.count_nonzero(_gains(retrieved, relevance, k) > 0)) / relevant


def hit_rate_at_k(retrieved: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    if not any(grade > 0 for grade in relevance.values()):
        return NAN
    return float(bool(np.any(_gains(retrieved, relevance, k) > 0)))


def reciprocal_rank(retrieved: Sequence[str], relevance: Mapping[str, float], k: int | None = None) -> float:
    if not any(grade > 0 for grade in relevance.values()):
        return NAN
    hits = np.flatnonzero(_gains(retrieved, relevance, k) > 0)
    return 1.0 / (hits[0] + 1) if hits.size else 0.0


def average_precision(retrieved: Sequence[str], relevance: Mapping[str, float], k: int | None = None) -> float:
    relevant = sum(1 for grade in relevance.values() if grade > 0)
    if relevant == 0:
        return NAN
    hits = _gains(retrieved, relevance, k) > 0
    if not hits.any():
        return 0.0
    precision_at_hits = np.cumsum(hits)[hits] / (np.flatnonzero(hits) + 1)
    return float(precision_at_hits.sum()) / relevant


def ndcg_at_k(retrieved: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    ideal = np.sort(np.array([g for g in relevance.values() if g > 0], dtype=float))[::-1][:k]
    if ideal.size == 0:
        return NAN
    gains = _gains(retrieved, relevance, k)
    discount = lambda n: 1.0 / np.log2(np.arange(2, n + 2))  # noqa: E731
    return float(np.sum(gains * discount(gains.size)) / np.sum(ideal * discount(ideal.size)))


def retrieval_scores(retrieved: Sequence[str], relevance: Mapping[str, float], k: int) -> dict[str, float]:
    """Every retrieval metric of one query at cutoff k (NaN where undefined)."""
    return {
        f"precision@{k}": precision_at_k(retrieved, relevance, k),
        f"recall@{k}": recall_at_k(retrieved, relevance, k),
        f"ndcg@{k}": ndcg_at_k(retrieved, relevance, k),
        f"mrr@{k}": reciprocal_rank(retrieved, relevance, k),
        f"hit_rate@{k}": hit_rate_at_k(retrieved, relevance, k),
        "average_precision": average_precision(retrieved, relevance),
    }
