"""The retrieval metrics: one formula family (``rag_assets.scoring.retrieval``) computed once per item from the
returned contexts and the item's evidence spans, with no judge. Every one is undefined (NaN) for an item
without relevant evidence (an adversarial question); token figures need the documents' words. An item the RAG
system failed on retrieved nothing: each scores it as such (0), diversity too (``Metric.score_errored``)."""

from __future__ import annotations

import math

from rag_assets.rag.models import RetrievedChunk
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import Judgment, Metric
from rag_assets.scoring.retrieval import diversity, document_hit_rate_at_k, rank_metrics, token_metrics
from rag_assets.text.tokens import tokenize


def _documents(chunk: RetrievedChunk) -> set[str]:
    """The documents a context comes from: every one its text is found in, and the source the system names."""
    return {place.path for place in chunk.places} | ({chunk.source} if chunk.source else set())


def figures(context: ItemContext) -> dict[str, float]:
    """Every retrieval figure of one answered item, by stored name (token figures only where the documents'
    words are known)."""
    response, evidence, k = context.response, context.evidence, context.k
    ranked = [r.places for r in response.retrieved]
    found = dict(rank_metrics(ranked, evidence, k, context.min_overlap))
    found[f"doc_hit_rate@{k}"] = document_hit_rate_at_k(
        [_documents(r) for r in response.retrieved], {p.path for e in evidence if e.grade > 0 for p in e.places}, k)
    if context.documents is not None:
        unlocated = sum(r.unplaced_words(len(tokenize(r.text))) for r in response.retrieved[:k])
        found.update(token_metrics(ranked, unlocated, evidence, k, context.documents.token_starts))
    found[f"diversity@{k}"] = diversity([(r.span, r.text) for r in response.retrieved], k)
    return found


def _member(name: str, at_k: bool, label: str, definition: str, **extra) -> Metric:
    """One figure of the family: its value is read from the item's ``figures``."""
    def score(context: ItemContext, judgment: Judgment) -> float:
        return context.shared("retrieval", figures).get(f"{name}@{context.k}" if at_k else name, math.nan)

    return Metric(name=name, label=label, kind="retrieval", definition=definition, score=score, at_k=at_k, **extra)


METRICS = (
    _member("precision", True, "Precision@k", "Share of the top k ranks whose context hits an evidence span they find: the "
            "two share at least half of the shorter one's characters, or the span is found at that rank (a missing "
            "rank or a context that could not be located is a miss)."),
    _member("recall", True, "Recall@k", "Share of the item's evidence spans the top k contexts find: together they "
            "cover at least half of the span's characters (``evidence_min_overlap``), however the text was cut into "
            "contexts."),
    _member("ndcg", True, "nDCG@k", "Discounted gain of the top k: a span counts once, at the rank it is found "
            "(see recall), with its grade, discounted by log2(rank + 1), over the ideal ranking's."),
    _member("mrr", True, "MRR@k", "1 / the rank at which the first evidence span is found (see recall), 0 if none "
            "in the top k."),
    _member("hit_rate", True, "Hit rate@k", "1 if the top k contexts find an evidence span (see recall), else 0.",
            headline=True, thresholds={"offline": 0.75}),
    _member("average_precision", False, "Average precision", "Over the ranks at which a span is found, the mean "
            "precision at that rank, over the number of evidence spans (every context returned, not cut at k)."),
    _member("doc_hit_rate", True, "Document hit rate@k", "1 if any of the top k contexts comes from a document that "
            "holds relevant evidence, else 0."),
    _member("token_recall", True, "Token recall@k", "Share of the evidence's word tokens inside the top k contexts."),
    _member("token_precision", True, "Token precision@k", "Share of the top k contexts' word tokens that are "
            "evidence (a context that could not be located counts as not evidence)."),
    _member("token_iou", True, "Token IoU@k", "Word tokens in both the top k contexts and the evidence, over those "
            "in either."),
    _member("diversity", True, "Diversity@k", "1 - the mean redundancy of pairs of the top k contexts (span "
            "overlap, else the Jaccard similarity of their word 3-shingles): whether they bring complementary text. "
            "Undefined below two contexts, but 0 for an item the RAG system failed on.", errored=lambda context: 0.0),
)
