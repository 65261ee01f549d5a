"""Kappa on hand-checked tables, the stratified sample, and the calibration gate's both sides."""

from __future__ import annotations

import math

import pytest

from rag_assets.calibration.gate import calibration_gate, kappa_standing
from rag_assets.calibration.models import ExpertVerdict, JudgeConfig, ReviewItem
from rag_assets.calibration.sample import stratified_sample
from rag_assets.calibration.stats import calibrate_metric
from rag_assets.errors import ConfigError
from rag_assets.calibration.models import StoredCalibration

OFFLINE = JudgeConfig("offline", "offline-heuristics-v1", "judge_faithfulness@2", "hashing")


def _verdicts(table: dict[tuple[str, str], int], metric: str = "faithfulness") -> list[ExpertVerdict]:
    """``table[(expert, judge)]`` items with that pair of verdicts."""
    rows, number = [], 2
    for (expert, judge), count in table.items():
        for _ in range(count):
            rows.append(ExpertVerdict(f"q-{number}", metric, judge, expert, "dana", None, number))
            number += 1
    return rows


def test_kappa_of_a_hand_checked_two_by_two_table():
    # expert \ judge   pass  fail
    #   pass             5     1
    #   fail             1     3        n = 10
    # observed agreement p_o = (5 + 3) / 10 = 0.8
    # judge says pass 6/10, experts say pass 6/10: chance p_e = 0.6 * 0.6 + 0.4 * 0.4 = 0.52
    # kappa = (p_o - p_e) / (1 - p_e) = 0.28 / 0.48 = 7/12 = 0.58333...
    result = calibrate_metric("faithfulness", _verdicts({("pass", "pass"): 5, ("pass", "fail"): 1,
                                                         ("fail", "pass"): 1, ("fail", "fail"): 3}))
    assert result.n == 10 and result.accuracy == pytest.approx(0.8)
    assert result.kappa.value == pytest.approx(7 / 12)
    assert result.kappa.low < 7 / 12 < result.kappa.high and -1.0 <= result.kappa.low and result.kappa.high <= 1.0
    assert result.confusion == {"pass": {"pass": 5, "fail": 1}, "fail": {"pass": 1, "fail": 3}}
    assert [(d.item_id, d.judge, d.expert) for d in result.disagreements] == [("q-7", "fail", "pass"),
                                                                              ("q-8", "pass", "fail")]


def test_kappa_is_undefined_when_everybody_says_pass_and_zero_when_only_the_experts_vary():
    # all 4 pass on both sides: p_e = 1, kappa = 0/0
    assert math.isnan(calibrate_metric("faithfulness", _verdicts({("pass", "pass"): 4})).kappa.value)
    # judge always pass, experts 3 pass 1 fail: p_o = 0.75, p_e = 1 * 0.75 + 0 * 0.25 = 0.75, kappa = 0
    assert calibrate_metric("faithfulness", _verdicts({("pass", "pass"): 3, ("fail", "pass"): 1})).kappa.value == 0.0


def _item(item_id: str, question_type: str, faithfulness: float, relevance: float | None) -> ReviewItem:
    scores = {"faithfulness": faithfulness, "answer_relevance": relevance, "context_precision": None,
              "context_recall": None}
    return ReviewItem(item_id, question_type, "q?", "a.", ("c",), scores, {m: "" for m in scores})


def test_the_sample_reaches_every_stratum_is_deterministic_and_capped():
    items = [_item(f"q-{i:02d}", "factual", 1.0, 1.0) for i in range(20)]      # 20 pass/pass factual
    items += [_item("q-90", "factual", 0.0, 1.0), _item("q-91", "multi_hop", 1.0, 0.2),
              _item("q-92", "adversarial", 1.0, None)]                          # three rare strata
    sample = stratified_sample(items, size=5, seed=0)
    ids = [i.item_id for i in sample]
    assert len(ids) == 5 and {"q-90", "q-91", "q-92"} <= set(ids)  # a proportional draw of 5 would miss them
    assert ids == sorted(ids) and ids == [i.item_id for i in stratified_sample(list(reversed(items)), 5, 0)]
    assert len(stratified_sample(items, size=100)) == len(items)


def _stored(metric: str, kappa: float | None, n: int = 30, config: JudgeConfig = OFFLINE) -> StoredCalibration:
    return StoredCalibration(config, metric, n, 0.9, kappa, None, None, "2026-12-01T00:00:00")


def test_the_gate_passes_at_the_threshold_and_fails_below_it_or_when_nothing_is_measurable():
    passed = calibration_gate(OFFLINE, OFFLINE, {"faithfulness": _stored("faithfulness", 0.6)}, 0.6)
    assert passed.passed and passed.rows == [("faithfulness", "30", "0.600", "ok")]
    low = calibration_gate(OFFLINE, OFFLINE, {"faithfulness": _stored("faithfulness", 0.72),
                                              "answer_relevance": _stored("answer_relevance", 7 / 12)}, 0.6)
    assert not low.passed
    assert low.description == "judge agreement with your experts below κ=0.6: answer_relevance κ=0.583"
    only_undefined = calibration_gate(OFFLINE, OFFLINE, {"faithfulness": _stored("faithfulness", None)}, 0.6)
    assert not only_undefined.passed and only_undefined.description.startswith("judge agreement not measurable")
    assert only_undefined.rows == [("faithfulness", "30", "undefined", "not measurable: one verdict on both sides")]


def test_a_metric_whose_verdicts_are_all_one_class_on_both_sides_is_not_measurable_and_fails_nothing():
    mixed = calibration_gate(OFFLINE, OFFLINE, {"faithfulness": _stored("faithfulness", None),
                                                "answer_relevance": _stored("answer_relevance", 0.8)}, 0.6)
    assert mixed.passed
    assert mixed.description.endswith("(faithfulness not measurable: one verdict on both sides)")
    low = calibration_gate(OFFLINE, OFFLINE, {"faithfulness": _stored("faithfulness", None),
                                              "answer_relevance": _stored("answer_relevance", 0.5)}, 0.6)
    assert not low.passed and low.description == "judge agreement with your experts below κ=0.6: answer_relevance κ=0.500"


def test_the_gate_fails_when_the_judge_model_changed_since_the_last_calibration_and_passes_before_any_verdict():
    claude = JudgeConfig("anthropic", "claude-haiku-4-5", OFFLINE.templates, "hashing")
    changed = calibration_gate(claude, OFFLINE, {}, 0.6)
    assert not changed.passed
    assert changed.description.startswith("the judge configuration changed since the last calibration "
                                          "(provider offline -> anthropic, model offline-heuristics-v1 -> "
                                          "claude-haiku-4-5)")
    for current in (OFFLINE, None):  # no expert verdict imported yet: nothing the check could fail on
        before = calibration_gate(current, None, {}, 0.6)
        assert before.passed and before.description.startswith("not applicable: no expert verdicts imported yet")
        required = calibration_gate(current, None, {}, 0.6, required=True)  # severity ERROR: a calibrated judge or fail
        assert not required.passed and required.description.startswith("the judge was never calibrated (severity ERROR")
    unused = calibration_gate(None, OFFLINE, {}, 0.6)
    assert unused.passed and unused.description == "not applicable: no evaluation has been judged yet, so no judge is in use"
    with pytest.raises(ConfigError, match="min_kappa=1.5 is not between 0 and 1"):
        calibration_gate(OFFLINE, OFFLINE, {}, 1.5)


def test_the_line_beside_a_metric_gives_kappa_with_its_interval_when_there_is_one():
    with_interval = StoredCalibration(OFFLINE, "faithfulness", 27, 0.96, 0.913, 0.741, 1.0, "2026-12-01T00:00:00")
    assert with_interval.describe() == "judge agreement with your experts κ=0.91 (95% interval 0.74 to 1.00), n=27"
    assert _stored("faithfulness", None).describe() == "judge agreement with your experts κ=undefined, n=30"


def test_kappa_standing_is_the_one_rule_of_the_check_and_the_cli():
    below = kappa_standing({"faithfulness": 0.5, "answer_relevance": None, "context_recall": 0.9}, 0.6)
    assert below.failed and below.low == ("faithfulness κ=0.500",) and below.unmeasurable == ("answer_relevance",)
    assert below.reason() == "judge agreement with your experts below κ=0.6: faithfulness κ=0.500"
    beside = kappa_standing({"faithfulness": None, "context_recall": 0.6}, 0.6)
    assert not beside.failed and beside.reason() == "", "undefined beside a measured kappa at the minimum: passes"
    nothing = kappa_standing({"faithfulness": None}, 0.6)
    assert nothing.failed and nothing.reason().startswith("judge agreement not measurable")
    assert kappa_standing({}, 0.6).failed, "no kappa at all: nothing measured"

