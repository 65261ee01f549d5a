"""Score a day's sample of production queries with the reference-free judge metrics.

Production queries have no golden labels, so only the metrics that need none apply:
faithfulness (with hallucination types), answer relevance, context precision and citation
accuracy. They are computed by the very judge path of the golden-set evaluation
(:func:`rag_assets.scoring.evaluate.evaluate`), so a production score and an evaluation score of
the same answer are the same number, cached under the same keys. Each query becomes a label-less
item whose "reference" is the served answer: context precision then asks whether each retrieved
chunk was useful for the answer given, the reference-free form of the metric.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.production.logs import ProductionQuery
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import EvaluationOutcome, evaluate
from rag_assets.scoring.metrics import REGISTRY

#: The reference-free metrics, those the registry gives a production drift advice (``Metric.production_drift``).
PRODUCTION_METRICS = tuple(m.name for m in REGISTRY if m.production_drift)
PRODUCTION_TYPE = "production"
PRODUCTION_CORPUS = "production"


def as_unlabelled_item(query: ProductionQuery) -> GoldenItem:
    """A query as an item with no relevant chunks and no statements: only reference-free metrics apply."""
    return GoldenItem(item_id=query.query_id, revision=1, question_type=PRODUCTION_TYPE, question=query.question,
                      reference_answer=query.answer or "", relevant_chunks=(), corpus_version=PRODUCTION_CORPUS)


def score_queries(queries: Sequence[ProductionQuery], client: LLMClient, cache: LLMCache | None,
                  embedder: Embedder) -> EvaluationOutcome:
    """Judge every query; item values and failures keep only :data:`PRODUCTION_METRICS`.

    A query that served no answer is recorded as a failure of the system (``rag_error``), not judged, and kept out
    of the day's means (unlike an evaluation's errored item, scored at its worst): a day's figures and their drift
    checks speak of the answers served, whose causes their alerts name; an outage would read as an unfaithful
    generator. How many queries were served no answer is reported beside them (`no_answer`).
    """
    outcome = evaluate([as_unlabelled_item(q) for q in queries], {q.query_id: q.to_response() for q in queries},
                       {}, {}, client, cache, embedder, k=1)
    for item in outcome.items:
        item.values = {metric: value for metric, value in item.values.items()
                       if metric in PRODUCTION_METRICS and item.rag_error is None}
        item.failures = {metric: why for metric, why in item.failures.items() if metric in PRODUCTION_METRICS}
    return outcome
