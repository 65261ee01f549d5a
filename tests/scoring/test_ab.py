"""A/B comparison of two RAG systems on hand-made per-item scores (12 items: exact permutation tests)."""

from __future__ import annotations

import pytest

from rag_assets.rag.error_budget import ErrorBudget, ErrorKind
from rag_assets.scoring.ab import APPROVE, REJECT, REVIEW, ABComparison, MetricComparison, compare_systems
from rag_assets.scoring.evaluate import JudgeFailureBudget, MetricFailures
from rag_assets.scoring.gates import ItemKey

KEYS: list[ItemKey] = [(f"i{n:02d}", 1) for n in range(12)]
TYPES = {k: "factual" if n % 2 else "abstractive" for n, k in enumerate(KEYS)}
METRICS = ("recall@5", "hit_rate@5", "faithfulness")
CURRENT = {k: {"recall@5": 0.9, "hit_rate@5": 1.0, "faithfulness": 0.9} for k in KEYS}


def _changed(metric_values: dict[str, float], most: int = 10) -> dict[ItemKey, dict[str, float]]:
    """CURRENT with the given metrics set to new values on the first ``most`` items."""
    return {k: {**CURRENT[k], **(metric_values if n < most else {})} for n, k in enumerate(KEYS)}


def _by(result: ABComparison) -> dict[tuple[str, str], MetricComparison]:
    return {(c.metric, c.scope): c for c in result.comparisons}


def test_a_system_compared_with_itself_is_approved_with_no_change():
    result = compare_systems(CURRENT, CURRENT, TYPES, METRICS)
    assert result.recommendation == APPROVE
    assert {(c.metric, c.scope) for c in result.comparisons} == {
        (m, s) for m in METRICS for s in ("overall", "abstractive", "factual")}
    for c in result.comparisons:
        assert c.delta == 0 and c.p_worse == 1 and c.p_better == 1
        assert not c.significant_regression and not c.significant_improvement
    assert result.differing_items == ()


def test_worse_retrieval_with_equal_faithfulness_needs_review():
    candidate = _changed({"recall@5": 0.4, "hit_rate@5": 0.0})
    result = compare_systems(CURRENT, candidate, TYPES, METRICS)
    assert result.recommendation == REVIEW
    by = _by(result)
    recall = by[("recall@5", "overall")]
    assert recall.delta == pytest.approx(-0.5 * 10 / 12) and recall.p_worse == pytest.approx(1 / 1024)
    assert recall.significant_regression and by[("hit_rate@5", "overall")].significant_regression
    assert by[("recall@5", "factual")].significant_regression  # 5 of 6 dropped: exact p = 1/32
    assert not by[("faithfulness", "overall")].significant_regression
    text = " ".join(result.reasons)
    assert "recall@5" in text and "hit_rate@5" in text and "[factual]" in text and "p_worse=0.0010" in text


def test_regressions_on_every_compared_metric_are_rejected():
    candidate = _changed({"recall@5": 0.4, "hit_rate@5": 0.0})
    result = compare_systems(CURRENT, candidate, TYPES, ("recall@5", "hit_rate@5"))
    assert result.recommendation == REJECT
    assert "regressions everywhere" in result.reasons[0]
    assert any("recall@5" in r for r in result.reasons) and any("hit_rate@5" in r for r in result.reasons)


def test_a_faithfulness_drop_is_rejected():
    result = compare_systems(CURRENT, _changed({"faithfulness": 0.8}), TYPES, METRICS)
    assert result.recommendation == REJECT
    assert "faithfulness" in result.reasons[0] and "delta -0.083" in result.reasons[0]


def test_faithfulness_has_a_tighter_bound_than_the_regression_gate():
    # -0.025 on every item: within the gate's allowed 0.03, beyond the A/B bound of 0.02.
    candidate = _changed({"faithfulness": 0.875}, most=12)
    result = compare_systems(CURRENT, candidate, TYPES, METRICS)
    faithfulness = _by(result)[("faithfulness", "overall")]
    assert not faithfulness.significant_regression and faithfulness.p_worse < 0.05
    assert result.recommendation == REJECT
    assert compare_systems(CURRENT, candidate, TYPES, METRICS, faithfulness_bound=0.03).recommendation == APPROVE


def test_an_improvement_only_is_approved():
    current = {k: {**v, "recall@5": 0.5} for k, v in CURRENT.items()}
    result = compare_systems(current, _changed({"recall@5": 0.9}), TYPES, METRICS)
    assert result.recommendation == APPROVE
    recall = _by(result)[("recall@5", "overall")]
    assert recall.significant_improvement and recall.delta > 0 and recall.p_better < 0.05 and recall.p_worse > 0.5
    assert any("improvement" in r and "recall@5" in r for r in result.reasons)


def test_only_items_scored_by_both_are_paired_and_small_scopes_are_skipped():
    candidate = {k: dict(v) for k, v in CURRENT.items() if k != KEYS[0]}  # i00 scored by current only
    candidate[KEYS[1]].pop("recall@5")  # no value
    candidate[KEYS[2]]["recall@5"] = float("nan")  # not a defined value either
    types = {**TYPES, KEYS[3]: "rare", KEYS[5]: "rare"}
    by = _by(compare_systems(CURRENT, candidate, types, ["recall@5"]))
    assert by[("recall@5", "overall")].n == 9
    assert ("recall@5", "rare") not in by  # 2 items < min_items


def test_nothing_comparable_is_not_approved():
    result = compare_systems(CURRENT, {}, TYPES, METRICS)
    assert result.recommendation == REVIEW and result.comparisons == ()


def test_differing_items_are_ordered_by_the_size_of_the_difference():
    candidate = {k: {**CURRENT[k], "recall@5": 0.9 - (n + 1) / 20 * (-1) ** n} for n, k in enumerate(KEYS)}
    result = compare_systems(CURRENT, candidate, TYPES, ["recall@5"])
    sizes = [abs(b - a) for _, _, a, b in result.differing_items]
    assert len(result.differing_items) == 10 and sizes == sorted(sizes, reverse=True)
    assert [i for i, *_ in result.differing_items[:3]] == ["i11", "i10", "i09"]
    assert result.differing_items[0] == ("i11", "recall@5", 0.9, pytest.approx(1.5))


def test_markdown_names_the_recommendation_and_has_a_row_per_metric():
    result = compare_systems(CURRENT, _changed({"recall@5": 0.4, "hit_rate@5": 0.0}), TYPES, METRICS)
    text = result.markdown()
    assert "REVIEW" in text and "significant regression: recall@5" in text
    overall = text.split("### Overall")[1].split("###")[0]
    for metric in METRICS:
        assert sum(line.startswith(f"| {metric} |") for line in overall.splitlines()) == 1
    assert "| factual | recall@5 |" in text and "| i00 | hit_rate@5 | 1.000 | 0.000 | -1.000 |" in text


def _budget(failed: int, metric: str = "faithfulness", items: int = 12) -> JudgeFailureBudget:
    """A side's judge failure budget (5%): ``failed`` of ``items`` not judged on ``metric``, none on the others."""
    return JudgeFailureBudget((MetricFailures(metric, failed, items),), 0.05)


def test_a_metric_whose_judge_calls_all_failed_on_one_side_cannot_be_decided_not_approved():
    """The tester's case: every faithfulness call failed, so faithfulness dropped out of the pairs and the rest was
    approved ("no significant regression in 6 comparisons")."""
    dropped = {k: {m: v for m, v in CURRENT[k].items() if m != "faithfulness"} for k in KEYS}
    before = compare_systems(CURRENT, dropped, TYPES, METRICS)
    assert before.recommendation == APPROVE and {c.metric for c in before.comparisons} == {"recall@5", "hit_rate@5"}
    result = compare_systems(CURRENT, dropped, TYPES, METRICS, unjudged={"current": _budget(0),
                                                                         "candidate": _budget(12)})
    assert result.recommendation == REVIEW
    assert result.reasons == ("cannot be decided: candidate faithfulness: 12 of 12 items (100.0%) not judged; "
                              "budget 5%",)
    assert "cannot be decided: candidate faithfulness" in result.markdown()


def test_one_failure_in_twelve_on_the_current_side_is_over_the_budget_and_none_is_within_it():
    # 1 of 12 (8.3%) on the current side: its faithfulness is compared on 11 items, not decidable
    result = compare_systems(CURRENT, CURRENT, TYPES, METRICS, unjudged={"current": _budget(1),
                                                                         "candidate": _budget(0)})
    assert (result.recommendation, result.reasons) == (
        REVIEW, ("cannot be decided: current faithfulness: 1 of 12 items (8.3%) not judged; budget 5%",))
    both = compare_systems(CURRENT, CURRENT, TYPES, METRICS, unjudged={"current": _budget(1), "candidate": _budget(2)})
    assert [r.split(":")[1] for r in both.reasons] == [" current faithfulness", " candidate faithfulness"]
    within = compare_systems(CURRENT, CURRENT, TYPES, METRICS, unjudged={"current": _budget(0), "candidate": _budget(0)})
    assert within.recommendation == APPROVE
    # a metric not compared is not this comparison's concern
    other = compare_systems(CURRENT, CURRENT, TYPES, METRICS, unjudged={"candidate": _budget(12, "context_recall")})
    assert other.recommendation == APPROVE


def test_what_was_not_judged_takes_precedence_over_a_rejection():
    """A faithfulness drop measured beside a judge over its budget rests on the calls that failed: REVIEW, the reason
    first, then the regression it would have rejected on; within the budget the rejection stands."""
    result = compare_systems(CURRENT, _changed({"faithfulness": 0.8}), TYPES, METRICS,
                             unjudged={"candidate": _budget(1)})
    assert result.recommendation == REVIEW
    assert result.reasons == (
        "cannot be decided: candidate faithfulness: 1 of 12 items (8.3%) not judged; budget 5%",
        "significant regression: faithfulness: delta -0.083 (p_worse=0.0010, p_better=1.0000, n=12)",
        "significant regression: faithfulness [abstractive]: delta -0.083 (p_worse=0.0312, p_better=1.0000, n=6)",
        "significant regression: faithfulness [factual]: delta -0.083 (p_worse=0.0312, p_better=1.0000, n=6)")
    within = compare_systems(CURRENT, _changed({"faithfulness": 0.8}), TYPES, METRICS,
                             unjudged={"candidate": _budget(0)}, rag_errors={"candidate": _errors(0)})
    assert within.recommendation == REJECT and within.reasons[0].startswith("faithfulness dropped beyond its bound")


def _errors(failed: int, items: int = 12) -> ErrorBudget:
    """A side's RAG error budget (5%): ``failed`` of ``items`` answers errored with the provider's 401."""
    kinds = (ErrorKind("PermissionError", failed, "i00", "401 authentication_error: invalid x-api-key"),) if failed else ()
    return ErrorBudget(items, failed, 0.05, kinds)


#: What an errored item scores (``score_errored``): the worst value of every metric, without a judge call.
ERRORED = {k: {"recall@5": 0.0, "hit_rate@5": 0.0, "faithfulness": 0.0} for k in KEYS}


def test_a_candidate_whose_answers_all_errored_cannot_be_decided_not_rejected():
    """The tester's case: the key was revoked mid-way, the candidate's answers all errored and counted at their worst
    unjudged, and the comparison REJECTed it on a faithfulness drop of -1 that measured the outage, not the system."""
    before = compare_systems(CURRENT, ERRORED, TYPES, METRICS)
    assert before.recommendation == REJECT, "the scores alone reject it: only the error budget tells the outage"
    result = compare_systems(CURRENT, ERRORED, TYPES, METRICS, unjudged={"current": _budget(0)},
                             rag_errors={"current": _errors(0), "candidate": _errors(12)})
    assert result.recommendation == REVIEW
    assert result.reasons[0] == (
        "cannot be decided: candidate RAG answers: 12 of 12 items errored (100.0%, budget 5.0%); "
        "PermissionError x12, e.g. i00: 401 authentication_error: invalid x-api-key")
    assert [r.split(":")[0] for r in result.reasons[1:]] == ["significant regression"] * 9
    assert result.reasons[7] == (  # every item dropped: exact p_worse = 1/4096
        "significant regression: faithfulness: delta -0.900 (p_worse=0.0002, p_better=1.0000, n=12)")
    assert not any("dropped beyond its bound" in r or "regressions everywhere" in r for r in result.reasons)
    # one error in twelve (8.3%) is over the budget as well, on either side; none is within it
    one = compare_systems(CURRENT, CURRENT, TYPES, METRICS, rag_errors={"current": _errors(1), "candidate": _errors(0)})
    assert (one.recommendation, one.reasons) == (REVIEW, (
        "cannot be decided: current RAG answers: 1 of 12 items errored (8.3%, budget 5.0%); "
        "PermissionError x1, e.g. i00: 401 authentication_error: invalid x-api-key",))
    none = compare_systems(CURRENT, CURRENT, TYPES, METRICS, rag_errors={"current": _errors(0), "candidate": _errors(0)})
    assert none.recommendation == APPROVE


def test_only_regressions_are_reviewed_with_a_label_that_says_so_not_mixed():
    """The tester's case: every significant move is a regression (hit rate 1.0 -> 0.0 on 10 of 12 items) and
    faithfulness fell on 2 items only (delta -0.083, exact p_worse = 1/4): no REJECT rule applies (faithfulness is
    not significant, not every metric regressed), so it stays REVIEW, but it is not "mixed"."""
    candidate = _changed({"recall@5": 0.4, "hit_rate@5": 0.0})
    for key in KEYS[:2]:
        candidate[key]["faithfulness"] = 0.4
    result = compare_systems(CURRENT, candidate, TYPES, METRICS)
    faithfulness = _by(result)[("faithfulness", "overall")]
    assert faithfulness.p_worse == pytest.approx(0.25) and faithfulness.delta == pytest.approx(-1 / 12)
    assert result.recommendation == REVIEW
    assert result.reasons[0] == (
        "only regressions: 6 significant regressions and no significant improvement; no REJECT rule applies "
        "(faithfulness did not drop significantly beyond its bound 0.020; not significant overall: faithfulness)")
    assert [r.split(":")[0] for r in result.reasons[1:]] == ["significant regression"] * 6
    assert "mixed" not in result.markdown()


def test_regressions_with_improvements_are_mixed_and_counted():
    current = {k: {**v, "faithfulness": 0.5} for k, v in CURRENT.items()}
    candidate = {k: {**v, "faithfulness": 0.9 if n < 10 else 0.5} for n, (k, v) in
                 enumerate(_changed({"recall@5": 0.4}).items())}
    result = compare_systems(current, candidate, TYPES, METRICS)
    assert result.recommendation == REVIEW
    assert result.reasons[0] == "mixed results: 3 significant regressions and 3 significant improvements"
    assert [r.split(":")[0] for r in result.reasons[1:]] == ["significant regression"] * 3 + [
        "significant improvement"] * 3
