"""The metrics: one module per metric (the retrieval @k family shares one), all registered in ``REGISTRY``.

A metric module defines its ``METRIC`` (or, for a formula family, ``METRICS``): its judge task and prompt
template when it has one, its formula, its thresholds per profile, its report text and the reason an
expert reads. Adding a metric is a new module and its line below; the evaluation, the gates, the report,
the exports and the status read the registry (``rag_assets.scoring.metrics.registry``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rag_assets.llm.templates import PromptTemplate, in_suite
from rag_assets.scoring.metrics import (answer_relevance, citation_accuracy, context_precision, context_recall,
                                        decline_accuracy, faithfulness, retrieval, temporal_faithfulness)
from rag_assets.scoring.metrics.registry import DEFAULT_K, JudgeTask, Metric, Registry

PREAMBLE = ("You judge the answers of a retrieval-augmented generation (RAG) system. Each request names one of the "
            "tasks below and forces its tool: do that task only, by its instructions.")


def in_one_suite(metrics: Sequence[Metric]) -> tuple[tuple[Metric, ...], tuple[PromptTemplate, ...]]:
    """The metrics with their judge tasks' templates joined in one suite, and the suite's templates in task order.

    Every judge call then carries all the tasks' tools and instructions (the rubric stated once), so the calls
    about one item share their prompt prefix up to its retrieved chunks (Anthropic prompt caching,
    rag_assets.llm.templates). Each task's steps are static, so they sit in its instructions, in that cached
    prefix; the user turn holds only what differs per call. A metric registered later (a test's) keeps its own
    template outside the suite, so the suite's prompts, and the cache keys made of them, never change with it.
    """
    tasks: dict[str, JudgeTask] = {}
    for metric in metrics:
        if metric.task is not None:
            tasks.setdefault(metric.task.name, metric.task)
    members = in_suite("judge", PREAMBLE, tuple(t.template for t in tasks.values()))
    joined = {name: replace(task, template=member) for (name, task), member in zip(tasks.items(), members)}
    return tuple(replace(m, task=joined[m.task.name]) if m.task else m for m in metrics), members


_METRICS, JUDGE_SUITE = in_one_suite((
    faithfulness.METRIC,
    answer_relevance.METRIC,
    context_precision.METRIC,
    context_recall.METRIC,
    citation_accuracy.METRIC,
    temporal_faithfulness.METRIC,
    decline_accuracy.METRIC,
    *retrieval.METRICS,
))
#: Every metric, in the order the tables, exports and docs show them.
REGISTRY = Registry(_METRICS)

__all__ = ["DEFAULT_K", "JUDGE_SUITE", "REGISTRY", "JudgeTask", "Metric", "Registry"]
