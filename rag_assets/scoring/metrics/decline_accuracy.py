"""Decline accuracy: whether the system declines the questions its documents cannot answer."""

from __future__ import annotations

from rag_assets.scoring.metrics import answer_relevance
from rag_assets.scoring.metrics.registry import Metric

METRIC = Metric(
    name="decline_accuracy", label="Decline accuracy", kind="judge", task=answer_relevance.TASK, items="adversarial",
    definition=("On adversarial questions (the corpus does not answer them): 1 when the answer declines or is "
                "noncommittal, by the answer-relevance judgment, 0 when it answers anyway, and 0 when the RAG system "
                "failed on it: an error is not a decline."),
    score=lambda context, judgment: 1.0 if judgment["noncommittal"] else 0.0,
    thresholds={"high_stakes": 0.95, "offline": 0.80},
    when_low=("The system answers questions the documentation cannot answer: add an explicit 'decline when the "
              "context does not answer' instruction and a support threshold."),
)
