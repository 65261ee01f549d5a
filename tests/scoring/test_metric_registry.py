"""The metric registry: a metric is one unit, and a metric registered in a test is scored, gated and reported."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

import rag_assets
from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring.diagnosis import diagnose
from rag_assets.scoring.metrics import REGISTRY, Metric, Registry
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import JudgeTask
from rag_assets.scoring.thresholds import load_thresholds
from rag_assets.testing import assert_quality

LIMITS = "Rate limits: the API allows 50 requests per minute per key."
ROTATE = "To rotate a key, create a new key and delete the old one."
ANSWERS = {"What is the rate limit?": "50 requests per minute [1].",
           "How do I rotate a key?": "Create a new key in the console, then delete the old key once nothing uses it."}


class Mention(BaseModel):
    mentions: bool


def _mentions_key(inputs: dict[str, Any]) -> dict[str, Any]:
    """The toy judge's offline answer: does the answer say "key"?"""
    return {"mentions": "key" in inputs["answer"].lower().split()}


MENTIONS = PromptTemplate(id="judge_mentions_key", version="1", system="Say whether the answer mentions a key.",
                          user=lambda i: i["answer"], output_model=Mention, offline=_mentions_key,
                          tool_description="Record whether the answer mentions a key.")
SHORT = Metric(name="short_answer", label="Short answer", kind="deterministic",
               definition="1 when the answer has at most six words, else 0.",
               score=lambda context, judgment: float(len((context.response.answer or "").split()) <= 6),
               thresholds={"offline": 0.9})
MENTIONS_KEY = Metric(name="mentions_key", label="Mentions the key", kind="judge",
                      task=JudgeTask("mentions_key", MENTIONS, lambda context: {"answer": context.response.answer}),
                      definition="1 when the judge says the answer mentions a key, else 0.",
                      score=lambda context, judgment: float(judgment["mentions"]))


def _system(request: dict) -> dict:
    return {"answer": ANSWERS[request["question"]], "retrieved": [{"id": "1", "text": LIMITS}]}


def _frame() -> pd.DataFrame:
    return pd.DataFrame([
        {"item_id": "limits", "user_input": "What is the rate limit?", "reference": "50 requests per minute.",
         "reference_contexts": [LIMITS]},
        {"item_id": "rotate", "user_input": "How do I rotate a key?", "reference": "Create a new key, delete the old.",
         "reference_contexts": [ROTATE]},
    ])


def test_a_metric_registered_in_a_test_is_scored_gated_and_reported(tmp_path: Path):
    without = rag_assets.evaluate(_frame(), _system)
    with REGISTRY.registered(SHORT), REGISTRY.registered(MENTIONS_KEY):
        result = rag_assets.evaluate(_frame(), _system)
        rows = result.to_pandas().set_index("item_id")
        assert (rows.loc["limits", "short_answer"], rows.loc["rotate", "short_answer"]) == (1.0, 0.0)
        assert (rows.loc["limits", "mentions_key"], rows.loc["rotate", "mentions_key"]) == (0.0, 1.0)
        assert result.outcome.judge_calls == without.outcome.judge_calls + 2, "one call of its own task per item"
        assert result.summary["metrics"]["short_answer"]["mean"] == 0.5
        assert load_thresholds("offline")["short_answer"] == 0.9
        with pytest.raises(AssertionError) as failed:
            assert_quality(result, {"short_answer": 0.9, "mentions_key": 0.5})
        assert str(failed.value) == (
            "RAG quality below the given thresholds (offline (deterministic heuristics, not a model's judgment)): "
            "1 of 2 metrics fail\n"
            "  short_answer 0.500 < 0.900; worst: 'How do I rotate a key?' (rotate) 0.000, "
            "'What is the rate limit?' (limits) 1.000")
        page = result.write_report(tmp_path / "report.html", {"short_answer": 0.9}).read_text(encoding="utf-8")
    row = page[page.index("<strong>short_answer</strong>"):].split("</tr>")[0]
    assert '<small class="definition">Short answer: 1 when the answer has at most six words, else 0.</small>' in row
    assert "0.90" in row and '<span class="badge fail">failed</span>' in row
    assert '<small class="definition">Mentions the key: 1 when the judge says' in page
    assert REGISTRY.find("short_answer") is None and "mentions_key" not in without.to_pandas().columns
    assert "short_answer" not in load_thresholds("offline"), "unregistered when the block ends"


def test_names_come_in_registry_order_with_k_and_by_kind():
    assert REGISTRY.names("judge") == ("faithfulness", "answer_relevance", "context_precision", "context_recall",
                                       "citation_accuracy", "temporal_faithfulness", "decline_accuracy")
    assert REGISTRY.names("retrieval", k=3) == (
        "precision@3", "recall@3", "ndcg@3", "mrr@3", "hit_rate@3", "average_precision", "doc_hit_rate@3",
        "token_recall@3", "token_precision@3", "token_iou@3", "diversity@3")
    assert REGISTRY.names() == (*REGISTRY.names("judge"), *REGISTRY.names("retrieval", k=5))
    assert REGISTRY.names("deterministic") == ()
    assert [m.name for m in REGISTRY.reviewed()] == ["faithfulness", "answer_relevance", "context_precision",
                                                     "context_recall"]
    assert REGISTRY.headline(10) == ("faithfulness", "answer_relevance", "context_precision", "context_recall",
                                     "hit_rate@10")


def test_a_stored_name_finds_its_metric_and_its_allowed_drop():
    assert REGISTRY.find("precision@3") is REGISTRY.get("precision")
    assert REGISTRY.find("average_precision") is REGISTRY.get("average_precision")
    assert REGISTRY.find("average_precision@5") is None and REGISTRY.find("contexts_unmapped_share") is None
    assert (REGISTRY.allowed_drop("faithfulness"), REGISTRY.allowed_drop("recall@5"),
            REGISTRY.allowed_drop("not_a_metric")) == (0.03, 0.05, 0.05)
    with pytest.raises(KeyError, match="no metric named 'nope'"):
        REGISTRY.get("nope")


def test_profiles_are_the_metrics_minimums():
    assert REGISTRY.profile("offline") == {"faithfulness": 0.90, "answer_relevance": 0.20, "context_precision": 0.30,
                                           "context_recall": 0.70, "decline_accuracy": 0.80, "hit_rate@5": 0.75}
    assert REGISTRY.profile("high_stakes") == {
        "faithfulness": 0.95, "answer_relevance": 0.85, "context_precision": 0.85, "context_recall": 0.85,
        "citation_accuracy": 0.95, "temporal_faithfulness": 0.95, "decline_accuracy": 0.95}
    assert REGISTRY.profile("developer") == {"faithfulness": 0.70, "answer_relevance": 0.60,
                                             "context_precision": 0.50, "context_recall": 0.50}


def test_judge_tasks_come_in_the_order_of_their_first_reader():
    assert [t.name for t in REGISTRY.tasks()] == ["faithfulness", "answer_relevance", "context_precision",
                                                  "context_recall"]
    faithfulness_task = REGISTRY.get("faithfulness").task
    assert [m.name for m in REGISTRY.readers(faithfulness_task)] == ["faithfulness", "citation_accuracy",
                                                                     "temporal_faithfulness"]


def test_which_items_a_metric_scores_and_which_evaluations_call_for_it():
    decline, relevance, faithfulness = (REGISTRY.get(n) for n in ("decline_accuracy", "answer_relevance",
                                                                 "faithfulness"))
    assert (decline.scores_type("adversarial"), decline.scores_type("factual")) == (True, False)
    assert (relevance.scores_type("adversarial"), relevance.scores_type("factual")) == (False, True)
    assert decline.called_for({"factual", "adversarial"}) and not decline.called_for({"factual"})
    assert not relevance.called_for({"adversarial"}) and faithfulness.called_for(())


def _toy(**changes) -> Metric:
    return Metric(**{"name": "toy", "label": "Toy", "definition": "d", "kind": "deterministic",
                     "score": lambda context, judgment: 1.0, **changes})


def test_the_registry_refuses_what_the_gates_or_the_evaluation_could_not_use():
    registry = Registry([_toy()])
    with pytest.raises(ValueError, match="^metric toy is registered already$"):
        registry.add(_toy())
    with pytest.raises(ValueError, match="^metric bad: a judge metric names its judge task"):
        registry.add(_toy(name="bad", kind="judge"))
    with pytest.raises(ValueError, match="^metric bad: unknown threshold profile 'strict'"):
        registry.add(_toy(name="bad", thresholds={"strict": 0.5}))
    with pytest.raises(ValueError, match="^metric bad: the gates read minimums"):
        registry.add(_toy(name="bad", higher_is_better=False))
    with pytest.raises(ValueError, match="^metric bad: a reason text tells the judge's answer"):
        registry.add(_toy(name="bad", reason=lambda judgment: "why"))
    with pytest.raises(ValueError, match="^metric bad: kind must be one of judge, retrieval, deterministic"):
        registry.add(_toy(name="bad", kind="vibes"))
    assert [m.name for m in registry] == ["toy"]


def test_registered_removes_the_metric_even_when_the_block_fails():
    registry = Registry()
    with pytest.raises(RuntimeError), registry.registered(_toy()):
        assert registry.names() == ("toy",)
        raise RuntimeError("the test failed inside the block")
    assert registry.names() == () and len(registry) == 0


def test_a_metric_scores_once_per_item_what_its_family_computes():
    computed = []

    def family(context: ItemContext) -> dict[str, float]:
        computed.append(context.item)
        return {"a": 1.0, "b": 2.0}

    context = ItemContext(item=None, response=None, versions={})  # type: ignore[arg-type]
    assert (context.shared("f", family)["a"], context.shared("f", family)["b"]) == (1.0, 2.0)
    assert len(computed) == 1


def test_a_low_metric_with_advice_of_its_own_gets_it_in_the_diagnosis():
    advice = "Answers are too long: ask for one sentence."
    assert diagnose({"short_answer": 0.2}) == ["No metric pattern points at a specific weakness."]
    with REGISTRY.registered(replace(SHORT, when_low=advice)):
        assert diagnose({"short_answer": 0.2, "decline_accuracy": 0.9}) == [advice]
        assert diagnose({"short_answer": 0.7}) == ["No metric pattern points at a specific weakness."]
    assert diagnose({"decline_accuracy": 0.5})[0].startswith("The system answers questions the documentation cannot")
