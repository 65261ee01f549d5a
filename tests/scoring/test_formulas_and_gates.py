"""Judge formulas, aggregates, significance, thresholds and the regression gate on hand-computed cases."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rag_assets.errors import ConfigError
from rag_assets.rag.models import Citation
from rag_assets.scoring import metrics
from rag_assets.scoring.aggregate import aggregate, aggregate_by_type
from rag_assets.scoring.evaluate import ItemScores
from rag_assets.scoring.gates import regression_gate
from rag_assets.scoring.significance import paired_drop_test
from rag_assets.scoring.thresholds import check_thresholds, load_thresholds


def _claim(text: str, verdict: str, chunks: list[str] | None = None) -> dict:
    return {"claim": text, "verdict": verdict, "supporting_chunk_ids": chunks or []}


def test_faithfulness_counts_grounded_claims_and_a_decline_claims_nothing():
    judgment = {"claims": [_claim("a", "grounded"), _claim("b", "fabrication"), _claim("c", "grounded"),
                           _claim("d", "inconsistency")]}
    score, counts = metrics.faithfulness.formula(judgment)
    assert score == 0.5 and counts == {"grounded": 2, "out_of_context": 0, "inconsistency": 1, "fabrication": 1}
    assert metrics.faithfulness.formula({"claims": []})[0] == 1.0


def test_context_precision_is_rank_aware_average_precision():
    assert metrics.context_precision.formula([True, False, True]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert metrics.context_precision.formula([False, False, True]) == pytest.approx(1 / 3)
    assert metrics.context_precision.formula([False, False]) == 0.0 and metrics.context_precision.formula([]) == 0.0


def test_context_recall_is_the_attributed_share():
    assert metrics.context_recall.formula([True, False, True, True]) == 0.75
    assert math.isnan(metrics.context_recall.formula([]))


class _AxisEmbedder:
    """A semantic embedder stand-in: a text containing "size" points along x, any other along y."""

    name, semantic = "axes", True

    def embed(self, texts):
        return np.array([[1.0, 0.0] if "size" in t else [0.0, 1.0] for t in texts])


def test_answer_relevance_is_completeness_times_focus_and_zero_for_noncommittal():
    from rag_assets.scoring.embedding import HashingEmbedder

    question = "What is the maximum file size?"
    judgment = {"question_parts": [{"part": "a", "answered": 1.0}, {"part": "b", "answered": 0.5}],
                "statements": [{"statement": s, "addresses_question": s != "aside"} for s in ("x", "y", "aside", "z")],
                "noncommittal": False, "questions": [question, "Which port?", "What size?"]}
    assert metrics.answer_relevance.formula(question, judgment, HashingEmbedder()) == pytest.approx(0.75 * 0.75)
    assert metrics.answer_relevance.formula(question, {**judgment, "noncommittal": True}, HashingEmbedder()) == 0.0
    semantic = metrics.answer_relevance.formula(question, judgment, _AxisEmbedder())
    assert semantic == pytest.approx((0.75 * 0.75 + 2 / 3) / 2), "only a semantic embedder adds the ragas score"


def test_citation_accuracy_checks_support_and_counts_unretrieved_chunks_as_fabricated():
    judgment = {"claims": [_claim("The limit is 15 GB.", "grounded", ["c1"]), _claim("Port 7443 is used.", "grounded", ["c2"])]}
    citations = [Citation("The limit is 15 GB.", "c1"), Citation("Port 7443 is used.", "c1"), Citation("x", "c9")]
    accuracy, fabricated = metrics.citation_accuracy.formula(citations, {"c1", "c2"}, judgment)
    assert accuracy == pytest.approx(1 / 3) and fabricated == 1
    assert math.isnan(metrics.citation_accuracy.formula([], {"c1"}, judgment)[0])


def test_temporal_faithfulness_wants_the_newest_or_the_named_version():
    versions = {"old": "1.6", "new": "2.0"}
    uses = lambda chunk: {"claims": [_claim("x", "grounded", [chunk])]}  # noqa: E731
    assert metrics.temporal_faithfulness.formula("What is the limit?", versions, uses("new")) == 1.0
    assert metrics.temporal_faithfulness.formula("What is the limit?", versions, uses("old")) == 0.0
    assert metrics.temporal_faithfulness.formula("What was the limit in 1.6?", versions, uses("old")) == 1.0
    assert math.isnan(metrics.temporal_faithfulness.formula("q", {"a": "2.0", "b": "2.0"}, uses("a")))
    assert math.isnan(metrics.temporal_faithfulness.formula("q", versions, {"claims": []}))


def test_aggregates_are_mean_sample_std_and_n_with_failures_apart():
    items = [ItemScores("a", 1, "factual", {"m": 1.0}), ItemScores("b", 1, "factual", {"m": 0.0}),
             ItemScores("c", 1, "multi_hop", {"m": 0.5}), ItemScores("d", 1, "multi_hop", failures={"m": "parse_error"})]
    overall = aggregate(items, "m")
    assert (overall.mean, overall.std, overall.n, overall.failures) == (0.5, 0.5, 3, 1)
    by_type = aggregate_by_type(items, ["m"])
    assert (by_type["factual"]["m"].mean, by_type["factual"]["m"].std) == (0.5, pytest.approx(math.sqrt(0.5)))
    assert (by_type["multi_hop"]["m"].n, by_type["multi_hop"]["m"].std, by_type["multi_hop"]["m"].failures) == (1, None, 1)


def test_the_exact_paired_test_on_five_consistent_drops_gives_one_in_thirty_two():
    test = paired_drop_test(np.ones(5), np.zeros(5))
    assert test.p_value == pytest.approx(1 / 32) and test.mean_drop == 1.0
    assert paired_drop_test(np.ones(5), np.ones(5)).p_value == 1.0


def test_the_gate_fails_a_significant_drop_beyond_its_delta_and_names_the_worse_items():
    keys = [(f"i{n}", 1) for n in range(20)]
    types = {k: "factual" if n % 2 else "abstractive" for n, k in enumerate(keys)}
    baseline = {k: {"recall@5": 1.0, "faithfulness": 0.9} for k in keys}
    current = {k: {"recall@5": 0.0 if n < 12 else 1.0, "faithfulness": 0.9} for n, k in enumerate(keys)}
    results = {(r.metric, r.scope): r for r in regression_gate(baseline, current, types, ["recall@5", "faithfulness"])}
    overall = results[("recall@5", "overall")]
    assert overall.failed and overall.drop == pytest.approx(0.6) and overall.p_value < 0.01
    assert {w[0] for w in overall.worse_items} == {f"i{n}" for n in range(12)}
    per_type = results[("recall@5", "abstractive")]  # 6 of its 10 items dropped: exact p = 1/2^6
    assert per_type.failed and per_type.p_value == pytest.approx(1 / 64)
    assert not results[("faithfulness", "overall")].failed
    assert not any(r.failed for r in regression_gate(baseline, baseline, types, ["recall@5"]))


def test_a_small_noisy_drop_is_not_significant():
    keys = [(f"i{n}", 1) for n in range(6)]
    baseline = {k: {"m": v} for k, v in zip(keys, [1.0, 0.0, 1.0, 0.0, 1.0, 0.0])}
    current = {k: {"m": v} for k, v in zip(keys, [0.0, 1.0, 0.0, 0.0, 1.0, 0.0])}
    (result,) = [r for r in regression_gate(baseline, current, {k: "factual" for k in keys}, ["m"]) if r.scope == "overall"]
    assert result.drop == pytest.approx(1 / 6) and result.p_value > 0.05 and not result.failed


def test_thresholds_come_from_a_profile_or_a_file_and_a_missing_metric_fails(tmp_path: Path):
    assert load_thresholds("general") == {"faithfulness": 0.85, "answer_relevance": 0.80, "context_precision": 0.75,
                                          "context_recall": 0.70}
    file = tmp_path / "t.yaml"
    file.write_text("faithfulness: 0.9\ncontext_recall: 0.5\n")
    assert load_thresholds("general", str(file)) == {"faithfulness": 0.9, "context_recall": 0.5}
    file.write_text("faithfulness: 9\n")
    with pytest.raises(ConfigError, match="field faithfulness: expected a number in \\[0, 1\\], got 9"):
        load_thresholds("general", str(file))
    with pytest.raises(ConfigError, match="profile must be one of auto, general, high_stakes, developer, offline"):
        load_thresholds("strict")
    items = [ItemScores("a", 1, "factual", {"faithfulness": 0.8})]
    results = check_thresholds({"faithfulness": aggregate(items, "faithfulness"),
                                "context_recall": aggregate(items, "context_recall")}, {"faithfulness": 0.75, "context_recall": 0.5},
                               {"factual"})
    assert [(r.metric, r.passed) for r in results] == [("faithfulness", True), ("context_recall", False)]


def _gate(items: list[ItemScores], metric: str, minimum: float = 0.8):
    (result,) = check_thresholds({metric: aggregate(items, metric)}, {metric: minimum}, {i.question_type for i in items})
    return result.passed, result.applicable, result.status


def test_a_metric_no_item_calls_for_is_not_applicable_and_never_fails_a_gate_while_one_that_failed_does():
    factual = ItemScores("a", 1, "factual", {"faithfulness": 1.0})
    assert _gate([factual], "decline_accuracy") == (True, False, "not applicable"), "no adversarial question"
    assert _gate([factual], "temporal_faithfulness") == (True, False, "not applicable"), "no document versions"
    declined = ItemScores("b", 1, "adversarial", {"decline_accuracy": 1.0})
    assert _gate([factual, declined], "decline_accuracy") == (True, True, "pass")
    missed = ItemScores("b", 1, "adversarial", {"decline_accuracy": 0.0})
    assert _gate([factual, missed], "decline_accuracy") == (False, True, "FAIL")
    # the RAG system failed on the adversarial item: decline accuracy applied, has no value, and fails
    errored = ItemScores("b", 1, "adversarial", rag_error="timeout")
    assert _gate([factual, errored], "decline_accuracy") == (False, True, "FAIL")
    # every judge call for it failed: it applied and fails
    judged_failed = ItemScores("a", 1, "factual", failures={"context_recall": "judge error"})
    assert _gate([judged_failed], "context_recall") == (False, True, "FAIL")
    # every item of the set errored in the RAG system: nothing is measured and every gate fails
    assert _gate([ItemScores("a", 1, "factual", rag_error="down")], "faithfulness") == (False, True, "FAIL")
    assert _gate([ItemScores("a", 1, "factual", rag_error="down")], "context_precision") == (False, True, "FAIL")
