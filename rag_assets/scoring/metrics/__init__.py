"""The metrics: one module per metric (the retrieval @k family shares one), all registered in ``REGISTRY``.

A metric module defines its ``METRIC`` (or, for a formula family, ``METRICS``): its judge task and prompt
template when it has one, its formula, its thresholds per profile, its report text and the reason an
expert reads. Adding a metric is a new module and its line below; the evaluation, the gates, the report,
the exports and the status read the registry (``rag_assets.scoring.metrics.registry``).
"""

from __future__ import annotations

from rag_assets.scoring.metrics import (answer_relevance, citation_accuracy, context_precision, context_recall,
                                        decline_accuracy, faithfulness, retrieval, temporal_faithfulness)
from rag_assets.scoring.metrics.registry import DEFAULT_K, JudgeTask, Metric, Registry

#: Every metric, in the order the tables, exports and docs show them.
REGISTRY = Registry((
    faithfulness.METRIC,
    answer_relevance.METRIC,
    context_precision.METRIC,
    context_recall.METRIC,
    citation_accuracy.METRIC,
    temporal_faithfulness.METRIC,
    decline_accuracy.METRIC,
    *retrieval.METRICS,
))

__all__ = ["DEFAULT_K", "REGISTRY", "JudgeTask", "Metric", "Registry"]
