"""The judge-review sample is stratified by the judge's score band per metric: fails, borderline scores and passes
of every metric reach the experts, however rare, so a lenient and a strict judge can both be caught."""

from __future__ import annotations

from collections import Counter

import pytest

from rag_assets.calibration.models import ReviewItem
from rag_assets.calibration.sample import band, strata, stratified_sample

METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")


def _item(item_id: str, question_type: str = "factual", **scores: float) -> ReviewItem:
    values = {m: scores.get(m) for m in METRICS}
    return ReviewItem(item_id, question_type, "q?", "a.", ("c",), values, {m: "" for m in METRICS})


@pytest.mark.parametrize(("value", "expected"), [(0.0, "fail"), (0.2499, "fail"), (0.25, "borderline"),
                                                 (0.5, "borderline"), (0.75, "borderline"), (0.7501, "pass"),
                                                 (1.0, "pass")])
def test_the_bands_cut_at_a_quarter_and_three_quarters_both_ends_borderline(value: float, expected: str):
    assert band(value) == expected


def test_an_item_belongs_to_its_question_type_and_to_the_band_of_every_scored_metric():
    item = _item("q-1", "multi_hop", faithfulness=1.0, answer_relevance=0.5, context_recall=0.0)
    assert strata(item) == (("question_type", "multi_hop"), ("faithfulness", "pass"),
                            ("answer_relevance", "borderline"), ("context_recall", "fail"))


def test_one_borderline_and_one_fail_among_38_passes_are_both_in_a_sample_of_3():
    # A proportional sample of 3 of these 40 holds 3 * 1/40 = 0.075 borderline items: none.
    # Strata, smallest first: faithfulness borderline {b} and fail {f} (1 item each), faithfulness pass (38),
    # question type factual (40): one round draws b, f and one pass.
    items = [_item(f"p-{i:02d}", faithfulness=1.0) for i in range(38)]
    items += [_item("b", faithfulness=0.5), _item("f", faithfulness=0.1)]
    sample = stratified_sample(items, size=3, seed=0)
    assert Counter(band(i.scores["faithfulness"]) for i in sample) == {"fail": 1, "borderline": 1, "pass": 1}
    assert {"b", "f"} <= {i.item_id for i in sample}
    for seed in range(20):
        assert {"b", "f"} <= {i.item_id for i in stratified_sample(items, size=3, seed=seed)}


def test_a_lenient_and_a_strict_metric_each_show_their_rare_band():
    # faithfulness passes all but f-1 (a lenient judge shows only in f-1 and the passes), answer relevance
    # fails all but r-1 (a strict judge), context precision has one borderline score (c-1).
    items = [_item(f"x-{i:02d}", faithfulness=0.9, answer_relevance=0.1, context_precision=1.0) for i in range(30)]
    items += [_item("f-1", faithfulness=0.0, answer_relevance=0.1, context_precision=1.0),
              _item("r-1", faithfulness=0.9, answer_relevance=0.8, context_precision=1.0),
              _item("c-1", faithfulness=0.9, answer_relevance=0.1, context_precision=0.3)]
    sample = stratified_sample(items, size=5, seed=3)
    assert len(sample) == 5 and {"f-1", "r-1", "c-1"} <= {i.item_id for i in sample}
    present = {(m, band(v)) for i in items for m, v in i.scores.items() if v is not None}
    drawn = {(m, band(v)) for i in sample for m, v in i.scores.items() if v is not None}
    assert drawn == present  # every band of every metric: 2 + 2 + 2 strata, all reached


def test_the_sample_is_seeded_and_independent_of_input_order():
    items = [_item(f"q-{i:02d}", faithfulness=i / 19) for i in range(20)]
    first = [i.item_id for i in stratified_sample(items, size=6, seed=7)]
    assert first == [i.item_id for i in stratified_sample(list(reversed(items)), size=6, seed=7)]
    assert first == sorted(first) and len(first) == 6
    assert {band(i.scores["faithfulness"]) for i in stratified_sample(items, size=6, seed=7)} == {
        "fail", "borderline", "pass"}
    assert any([i.item_id for i in stratified_sample(items, size=6, seed=s)] != first for s in range(8))
