"""Retrieval metrics from golden labels, with trec_eval's definitions, and graded credit for
contexts that cover part of a chunk.

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

Partial credit (a system with its own chunking): a rank may hold, instead of one snapshot chunk
id, a mapping ``{chunk_id: credit}`` with credit in (0, 1], the snapshot chunks the returned
context stands for (``rag_assets.corpus.mapping.credit``: full from 80% of a chunk covered,
proportional below). Credit accumulates per chunk down the ranking, capped at 1 (two windows that
each hold half of a chunk retrieve it), and each rank earns what it adds:

- a rank's hit h = the credit it adds to relevant chunks (at most 1), its gain g = the same
  weighted by grade; precision@k = sum(h) / k; recall@k = the relevant chunks' credit / their
  number; hit rate@k = the best credit of a relevant chunk; MRR = h / rank at the first rank
  with h > 0; average precision = sum(h_i * precision@i) / relevant; nDCG from g.

With whole chunks (every credit 1) these are exactly the trec_eval figures above. The cutoff k
counts the system's ranks (its contexts), not the chunks they map onto.
- document hit rate@k is 1 if any of the top k contexts comes from a document that holds a
  relevant chunk, for systems whose chunking differs much from the snapshot's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

NAN = float("nan")

Rank = str | Mapping[str, float]  # one snapshot chunk id (full credit), or chunk id -> credit


def _positions(retrieved: Sequence[Rank], k: int | None) -> list[Mapping[str, float]]:
    """Ranks as chunk id -> credit, cut at k; a repeated plain id is dropped before the cut."""
    seen: set[str] = set()
    out: list[Mapping[str, float]] = []
    for rank in retrieved:
        if isinstance(rank, str):
            if rank in seen:
                continue
            seen.add(rank)
            rank = {rank: 1.0}
        out.append(rank)
    return out if k is None else out[:k]


def _credited(retrieved: Sequence[Rank], relevance: Mapping[str, float],
              k: int | None) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """(hit per rank, gain per rank, credit per relevant chunk) of the top k ranks."""
    credit: dict[str, float] = {}
    hits, gains = [], []
    for position in _positions(retrieved, k):
        hit = gain = 0.0
        for chunk_id, share in position.items():
            grade = float(relevance.get(chunk_id, 0.0))
            if grade <= 0:
                continue
            before = credit.get(chunk_id, 0.0)
            credit[chunk_id] = min(1.0, before + share)
            hit += credit[chunk_id] - before
            gain += grade * (credit[chunk_id] - before)
        hits.append(min(1.0, hit))
        gains.append(gain)
    return np.array(hits, dtype=float), np.array(gains, dtype=float), credit


def _relevant(relevance: Mapping[str, float]) -> int:
    return sum(1 for grade in relevance.values() if grade > 0)


def precision_at_k(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int) -> float:
    if not _relevant(relevance):
        return NAN
    return float(_credited(retrieved, relevance, k)[0].sum()) / k


def recall_at_k(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int) -> float:
    relevant = _relevant(relevance)
    if relevant == 0:
        return NAN
    return sum(_credited(retrieved, relevance, k)[2].values()) / relevant


def hit_rate_at_k(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int) -> float:
    if not _relevant(relevance):
        return NAN
    return max(_credited(retrieved, relevance, k)[2].values(), default=0.0)


def reciprocal_rank(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int | None = None) -> float:
    if not _relevant(relevance):
        return NAN
    hits = _credited(retrieved, relevance, k)[0]
    found = np.flatnonzero(hits > 0)
    return float(hits[found[0]]) / (found[0] + 1) if found.size else 0.0


def average_precision(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int | None = None) -> float:
    relevant = _relevant(relevance)
    if relevant == 0:
        return NAN
    hits = _credited(retrieved, relevance, k)[0]
    if not hits.any():
        return 0.0
    precision = np.cumsum(hits) / np.arange(1, hits.size + 1)
    return float(np.sum(hits * precision)) / relevant


def ndcg_at_k(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int) -> float:
    ideal = np.sort(np.array([g for g in relevance.values() if g > 0], dtype=float))[::-1][:k]
    if ideal.size == 0:
        return NAN
    gains = _credited(retrieved, relevance, k)[1]
    discount = lambda n: 1.0 / np.log2(np.arange(2, n + 2))  # noqa: E731
    return float(np.sum(gains * discount(gains.size)) / np.sum(ideal * discount(ideal.size)))


def document_hit_rate_at_k(documents: Sequence[Collection[str]], relevant_documents: Collection[str], k: int) -> float:
    """1 if a document of any of the top k contexts (``documents``: per rank, the documents it
    comes from) holds a relevant chunk; NaN without relevant documents."""
    if not relevant_documents:
        return NAN
    return float(any(not set(docs).isdisjoint(relevant_documents) for docs in documents[:k]))


def retrieval_scores(retrieved: Sequence[Rank], relevance: Mapping[str, float], k: int) -> dict[str, float]:
    """Every chunk-level retrieval metric of one query at cutoff k (NaN where undefined)."""
    return {
        f"precision@{k}": precision_at_k(retrieved, relevance, k),
        f"recall@{k}": recall_at_k(retrieved, relevance, k),
        f"ndcg@{k}": ndcg_at_k(retrieved, relevance, k),
        f"mrr@{k}": reciprocal_rank(retrieved, relevance, k),
        f"hit_rate@{k}": hit_rate_at_k(retrieved, relevance, k),
        "average_precision": average_precision(retrieved, relevance),
    }
