"""``assert_quality``: a pytest assertion on an evaluation's quality, for CI.

::

    result = rag_assets.evaluate("golden.ragas.jsonl", my_rag)
    assert_quality(result, "general")   # or a thresholds file, or {"faithfulness": 0.9}

A failure lists each metric below its minimum (mean against minimum) with the items that pull it
down most, and the judge failure budget when it is spent, so the CI log says what to look at.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rag_assets.api import EvaluationResult
from rag_assets.rag.error_budget import DEFAULT_MAX_ERROR_RATE
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE
from rag_assets.scoring.thresholds import AUTO, ThresholdResult

WORST = 3


QUESTION_CHARS = 60  # of a question, in a failure line


def _named(question: str, item_id: str) -> str:
    """An item as a CI log reader knows it: by its question (cut short), with its id to find it by."""
    shown = question if len(question) <= QUESTION_CHARS else question[:QUESTION_CHARS - 1].rstrip() + "…"
    return f"{shown!r} ({item_id})"


def _worst(result: EvaluationResult, metric: str, limit: int = WORST) -> str:
    """The items with the lowest value of ``metric``, lowest first, named by their questions."""
    questions = {i.item_id: i.question for i in result.items}
    scored = sorted((i.values[metric], i.item_id) for i in result.outcome.items if metric in i.values)
    return ", ".join(f"{_named(questions.get(item_id, ''), item_id)} {value:.3f}"
                     for value, item_id in scored[:limit]) or "no item has a value"


def _line(result: EvaluationResult, threshold: ThresholdResult) -> str:
    mean = "no value" if threshold.mean is None else f"{threshold.mean:.3f}"
    return f"  {threshold.metric} {mean} < {threshold.minimum:.3f}; worst: {_worst(result, threshold.metric)}"


def quality_failures(result: EvaluationResult, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO,
                     max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE,
                     max_rag_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> str | None:
    """What :func:`assert_quality` would say, or None when the result meets the thresholds."""
    gates = result.gates(profile_or_thresholds, max_judge_failure_rate, max_rag_error_rate)
    failed = [t for t in gates.thresholds if not t.passed]
    lines = [f"  RAG errors: {gates.rag_errors.describe()}"] if not gates.rag_error_budget_passed else []
    lines += [_line(result, t) for t in failed]
    if not gates.failure_budget_passed:
        lines += [f"  {m.describe(max_judge_failure_rate)}" for m in gates.judge_budget.over]
    if not lines:
        return None
    gated = [t for t in gates.thresholds if t.applicable]
    inapplicable = [t.metric for t in gates.thresholds if not t.applicable]
    if inapplicable:
        lines.append(f"  not applicable (no item calls for it): {', '.join(inapplicable)}")
    budget = "" if gates.rag_error_budget_passed else ", and the RAG error budget is spent"
    return (f"RAG quality below {result.thresholds_label(profile_or_thresholds)} ({result.judge}): {len(failed)} of "
            f"{len(gated)} metrics fail{budget}\n" + "\n".join(lines))


def assert_quality(result: EvaluationResult, profile_or_thresholds: str | Path | Mapping[str, float] = AUTO,
                   max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE,
                   max_rag_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> None:
    """Fail the calling test (AssertionError) unless every metric of ``profile_or_thresholds`` (a profile
    name, a YAML/JSON thresholds file, or ``{metric: minimum}``) is at or above its minimum, the judge
    failed on at most ``max_judge_failure_rate`` of each judge metric's items and the system on at most
    ``max_rag_error_rate`` of the items (the asset's error budget)."""
    message = quality_failures(result, profile_or_thresholds, max_judge_failure_rate, max_rag_error_rate)
    if message:
        raise AssertionError(message)
