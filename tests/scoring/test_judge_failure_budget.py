"""The judge failure budget is per metric: the tester's case, where the judge failed only on the unfaithful answers'
faithfulness calls.

48 items: 42 factual (four judge calls each: faithfulness, answer relevance, context precision, context recall) and
6 adversarial (two: faithfulness, answer relevance), 42 * 4 + 6 * 2 = 180 calls. The judge failed on the faithfulness
call of 7 factual items and on nothing else: 7 of 180 calls (3.9%, under the 5% budget pooled), but 7 of the 48 items
faithfulness scores (14.6%). The 41 faithfulness values left are 1.0 on 34 items and 0.5 on 7, so the mean shown
would be (34 + 3.5) / 41 = 0.915 while the 7 unjudged items are the unfaithful ones.
"""

from __future__ import annotations

import pytest

from rag_assets.app.evaluation import Gating, assess
from rag_assets.llm.results import LLMStats
from rag_assets.scoring.evaluate import (EvaluationOutcome, ItemScores, judge_failure_budget,
                                         with_statement_calls)
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.statements import NO_STATEMENTS, Stated

FACTUAL_TASKS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")
ADVERSARIAL_TASKS = ("faithfulness", "answer_relevance")


def _item(n: int, qtype: str, failed: tuple[str, ...] = (), faithfulness: float = 1.0) -> ItemScores:
    tasks = FACTUAL_TASKS if qtype == "factual" else ADVERSARIAL_TASKS
    scores = ItemScores(f"q-{n:02d}", 1, qtype)
    scores.outputs = {task: {} for task in tasks if task not in failed}
    # as the evaluation records a failed call: against every metric that reads the task and scores the item
    scores.failures = {m.key(5): f"judge_{task}@3 api_error: empty content" for task in failed
                       for m in REGISTRY.metrics("judge") if m.task.name == task and m.scores_type(qtype)}
    if "faithfulness" not in failed:
        scores.values["faithfulness"] = faithfulness
    for task in ("answer_relevance", "context_precision", "context_recall"):
        if task in scores.outputs:
            scores.values[task] = 1.0
    return scores


def _outcome(faithfulness_failed: int, others_failed: int = 0) -> EvaluationOutcome:
    """42 factual and 6 adversarial items; the first ``faithfulness_failed`` factual items' faithfulness calls
    failed, and the context-precision calls of the next ``others_failed``."""
    items = []
    for n in range(42):
        failed = (("faithfulness",) if n < faithfulness_failed else
                  ("context_precision",) if n < faithfulness_failed + others_failed else ())
        items.append(_item(n, "factual", failed, 0.5 if 7 <= n < 14 else 1.0))
    items += [_item(n, "adversarial") for n in range(42, 48)]
    failures = faithfulness_failed + others_failed
    return EvaluationOutcome(items, LLMStats(), 180, failures, 5)


def test_failures_concentrated_on_one_metric_fail_the_budget_though_under_5_percent_of_all_calls():
    outcome = _outcome(7)
    assert outcome.judge_failure_rate == pytest.approx(7 / 180) and outcome.judge_failure_rate < 0.05
    gates = assess(outcome, Gating({})).gates
    assert not gates.failure_budget_passed and not gates.passed
    # citation accuracy and temporal faithfulness read the faithfulness call's answer: they lost the same 7 items
    assert gates.failure_budget_text() == ("faithfulness: 7 of 48 items (14.6%) not judged; budget 5%; "
                                           "citation_accuracy: 7 of 48 items (14.6%) not judged; budget 5%; "
                                           "temporal_faithfulness: 7 of 48 items (14.6%) not judged; budget 5%")
    assert [(m.metric, m.failed, m.items) for m in gates.judge_failures] == [
        ("faithfulness", 7, 48), ("answer_relevance", 0, 42), ("context_precision", 0, 42), ("context_recall", 0, 42),
        ("citation_accuracy", 7, 48), ("temporal_faithfulness", 7, 48), ("decline_accuracy", 0, 6)]
    assert assess(outcome, Gating({})).scorecard.overall["faithfulness"].mean == pytest.approx(37.5 / 41)
    assert gates.as_dict()["judge_failures"][0] == {"metric": "faithfulness", "failed": 7, "items": 48}


def test_the_budget_is_each_metrics_own_share_at_and_over_its_limit():
    # 2 of 48 (4.2%) faithfulness and 2 of 42 (4.8%) context precision: each within 5%
    within = assess(_outcome(2, 2), Gating({})).gates
    assert within.failure_budget_passed and within.passed
    assert within.failure_budget_text() == ("every judge metric within the budget of 5% of its items not judged "
                                            "(most: context_precision 2 of 42)")
    # 3 of 42 context precision (7.1%) fails though faithfulness' 2 of 48 does not; pooled 5 of 180 (2.8%)
    over = assess(_outcome(2, 3), Gating({})).gates
    assert over.failure_budget_text() == "context_precision: 3 of 42 items (7.1%) not judged; budget 5%"
    # a budget of 1/6 (16.7%) lets 7 of 48 (14.6%) pass; one of 1/8 (12.5%) does not
    assert assess(_outcome(7), Gating({}, max_judge_failure_rate=1 / 6)).gates.failure_budget_passed
    tight = assess(_outcome(7), Gating({}, max_judge_failure_rate=0.125)).gates
    assert tight.failure_budget_text().startswith("faithfulness: 7 of 48 items (14.6%) not judged; budget 12.5%; ")


def test_items_the_rag_system_failed_on_and_metrics_never_asked_are_not_counted():
    items = [_item(0, "factual", ("faithfulness",)), *(_item(n, "factual") for n in range(1, 20)),
             ItemScores("q-99", 1, "factual", rag_error="timeout")]
    budget = judge_failure_budget(items, 0.05)
    faithfulness = budget.metrics[0]
    assert (faithfulness.metric, faithfulness.failed, faithfulness.items) == ("faithfulness", 1, 20)
    assert "decline_accuracy" not in {m.metric for m in budget.metrics}, "no adversarial item: not asked"
    assert budget.describe() == "every judge metric within the budget of 5% of its items not judged (most: faithfulness 1 of 20)"
    assert not judge_failure_budget(items[:19], 0.05).passed  # 1 of 19 is 5.3%


def _with_statements(judged: int, judge_failed: int, split_failed: int) -> EvaluationOutcome:
    """4 factual items judged on ``judged`` calls, ``judge_failed`` of them failed, then each item's reference split
    into statements (4 more calls), the first ``split_failed`` of them failed."""
    items = [ItemScores(f"q-{n}", 1, "factual", failures={"context_recall": NO_STATEMENTS}) for n in range(4)]
    split = Stated([], LLMStats(calls=4), {f"q-{n}": "split_statements@1 api_error: 401" for n in range(split_failed)})
    return with_statement_calls(EvaluationOutcome(items, LLMStats(calls=judged), judged, judge_failed, 5), split)


def test_the_share_of_all_judge_calls_failed_counts_the_statement_calls_in_both_terms():
    # a judge answering 401 on everything: 8 judge calls and 4 statement splits, 12 of 12 failed
    everything = _with_statements(8, 8, 4)
    assert (everything.judge_failures, everything.judge_failure_rate) == (12, 1.0)
    assert f"{everything.judge_failure_rate:.1%}" == "100.0%"
    # one statement split of the 12 calls failed: 1 / 12
    one = _with_statements(8, 0, 1)
    assert one.judge_failure_rate == pytest.approx(1 / 12) and f"{one.judge_failure_rate:.1%}" == "8.3%"
    assert one.judge_calls == 8, "judge_calls stays the calls that judge answers"
    assert EvaluationOutcome.from_json(one.to_json()) == one
    assert EvaluationOutcome.merge([one, everything], 5).judge_failure_rate == pytest.approx(13 / 24)
