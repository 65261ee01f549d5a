"""An item the RAG system failed on counts at the worst value of every metric that would have scored it: a system
cannot lift a mean, and pass a gate, by raising on the items it would miss."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import rag_assets
from rag_assets.api import EvaluationResult
from rag_assets.testing import assert_quality

CONTEXTS = {
    "limits": "Rate limits: the API allows 50 requests per minute per key.",
    "rotate": "To rotate a key, create a new key and delete the old one.",
    "hooks": "Webhooks retry failed deliveries three times with exponential backoff.",
    "logs": "Logs are kept for thirty days and can be exported as CSV.",
}
FOUR_AND_ONE = pd.DataFrame([
    {"item_id": "limits", "user_input": "What is the rate limit?", "reference": "50 requests per minute per key.",
     "reference_contexts": [CONTEXTS["limits"]]},
    {"item_id": "rotate", "user_input": "How do I rotate a key?", "reference": "Create a new key and delete the old one.",
     "reference_contexts": [CONTEXTS["rotate"]]},
    {"item_id": "hooks", "user_input": "How often are webhooks retried?", "reference": "Three times, with backoff.",
     "reference_contexts": [CONTEXTS["hooks"]]},
    {"item_id": "logs", "user_input": "How long are logs kept?", "reference": "Thirty days.",
     "reference_contexts": [CONTEXTS["logs"]]},
    {"item_id": "moon", "user_input": "What does the moon cost?", "reference": "The documents do not say.",
     "reference_contexts": [], "question_type": "adversarial"},
])
REFERENCES = dict(zip(FOUR_AND_ONE["item_id"], FOUR_AND_ONE["reference"]))


def _honest(request: dict) -> dict:
    """Retrieves the item's own context and answers with its reference; declines the adversarial question."""
    if request["item_id"] not in CONTEXTS:
        return {"answer": "", "reason": "the documents do not say", "declined": True, "retrieved": []}
    return {"answer": REFERENCES[request["item_id"]],
            "retrieved": [{"id": "c1", "text": CONTEXTS[request["item_id"]]}]}


def _raising_on(*item_ids: str):
    def system(request: dict) -> dict:
        if request["item_id"] in item_ids:
            raise RuntimeError("timeout talking to the vector db")
        return _honest(request)
    return system


def _mean(result: EvaluationResult, metric: str) -> tuple[float | None, int]:
    found = result.summary["metrics"][metric]
    return found["mean"], found["n"]


def test_four_items_one_errored_and_an_errored_adversarial_item_count_at_zero_in_every_mean_that_scores_them(
        tmp_path: Path):
    honest = rag_assets.evaluate(FOUR_AND_ONE, _honest)
    failing = rag_assets.evaluate(FOUR_AND_ONE, _raising_on("rotate", "moon"))
    assert failing.summary["rag_errors"] == 2
    # retrieval, by hand: three of the four answerable items hit their one evidence span at rank 1, one retrieved
    # nothing (the adversarial item has no evidence: no retrieval metric scores it, errored or not)
    assert _mean(failing, "hit_rate@5") == (0.75, 4) and _mean(failing, "recall@5") == (0.75, 4)
    assert _mean(failing, "mrr@5") == (0.75, 4) and _mean(failing, "ndcg@5") == (0.75, 4)
    assert _mean(failing, "precision@5") == (pytest.approx(0.15), 4)
    # an error is not a decline: the adversarial question the honest system declined scores 0
    assert _mean(honest, "decline_accuracy") == (1.0, 1) and _mean(failing, "decline_accuracy") == (0.0, 1)
    # the judge metrics: the answered items' own values, the errored ones at 0, over every item that metric scores
    answered = {i.item_id: i.values for i in honest.outcome.items if i.item_id not in ("rotate", "moon")}
    for metric, items in (("faithfulness", 5), ("answer_relevance", 4), ("context_precision", 4),
                          ("context_recall", 4)):
        expected = sum(values[metric] for values in answered.values()) / items
        assert _mean(failing, metric) == (pytest.approx(expected), items), metric
        assert _mean(failing, metric)[0] < _mean(honest, metric)[0], metric
    rows = failing.to_pandas().set_index("item_id")
    rotate, moon = rows.loc["rotate"], rows.loc["moon"]
    assert rotate["rag_error"].endswith("timeout talking to the vector db") and rotate["failures"] == {}
    assert (rotate["faithfulness"], rotate["answer_relevance"], rotate["context_precision"], rotate["context_recall"],
            rotate["hit_rate@5"], rotate["token_recall@5"], rotate["diversity@5"]) == (0, 0, 0, 0, 0, 0, 0)
    assert math.isnan(rotate["citation_accuracy"]) and math.isnan(rotate["temporal_faithfulness"]), \
        "undefined for an answer that cites nothing and rests on no chunk, as for any such answer"
    assert (moon["faithfulness"], moon["decline_accuracy"]) == (0, 0) and math.isnan(moon["hit_rate@5"])
    # no judge verdict is made up for an errored item, and no judge call is made for it
    errored = [i for i in failing.outcome.items if i.rag_error is not None]
    assert [(i.item_id, i.outputs, i.claims, i.hallucinations, i.useful) for i in errored] == [
        ("rotate", {}, [], {}, {}), ("moon", {}, [], {}, {})]
    assert failing.outcome.judge_calls == sum(len(answered) for answered in (
        i.outputs for i in honest.outcome.items if i.item_id not in ("rotate", "moon")))
    page = failing.write_report(tmp_path / "report.html", {"hit_rate@5": 0.5}).read_text(encoding="utf-8")
    assert page.count("The RAG system failed on this item: ") == 2
    assert page.count("No judge was asked; every metric that scores it counts it at its worst value.") == 2


#: twenty answerable items; the system's retrieval misses the first one
TWENTY = pd.DataFrame([{"item_id": f"s{n:02d}", "user_input": f"What does setting number {n} default to?",
                        "reference": f"Setting {n} defaults to {n * 7} units.",
                        "reference_contexts": [f"Setting {n} defaults to {n * 7} units unless the operator changes it."]}
                       for n in range(20)])


def _misses_s00(request: dict) -> dict:
    n = int(request["item_id"][1:])
    found = (n + 1) % 20 if n == 0 else n
    return {"answer": f"Setting {found} defaults to {found * 7} units.",
            "retrieved": [{"id": f"c{found}", "text": f"Setting {found} defaults to {found * 7} units unless the "
                                                      "operator changes it."}]}


def _hides_s00(request: dict) -> dict:
    if request["item_id"] == "s00":
        raise RuntimeError("timeout talking to the vector db")
    return _misses_s00(request)


def test_a_system_raising_on_the_item_it_misses_fails_the_gate_the_honest_system_fails_with_no_better_figures():
    """The tester's case at small scale: 1 error of 20 is within the 5% error budget, and before, the errored item
    left every mean, so the hiding system scored hit rate 1.000 and passed where the honest one failed."""
    gate = {"hit_rate@5": 0.97, "recall@5": 0.97}
    honest, hiding = rag_assets.evaluate(TWENTY, _misses_s00), rag_assets.evaluate(TWENTY, _hides_s00)
    assert (honest.summary["rag_errors"], hiding.summary["rag_errors"]) == (0, 1)
    assert _mean(honest, "hit_rate@5") == _mean(hiding, "hit_rate@5") == (0.95, 20)
    for metric in honest.metrics:
        before, after = _mean(honest, metric)[0], _mean(hiding, metric)[0]
        assert before is None or after <= before + 1e-12, f"{metric}: {after} > {before} by raising"
    gates = hiding.gates(gate)
    assert gates.rag_error_budget_passed and not gates.thresholds_passed and not gates.passed
    with pytest.raises(AssertionError, match=r"2 of 2 metrics fail\n  hit_rate@5 0\.950 < 0\.970; worst: .*\(s00\) 0\.000"):
        assert_quality(hiding, gate)
