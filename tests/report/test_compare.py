"""Two evaluations item by item: hand-computed deltas, flips and the paired test's exact p-value."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag_assets.report.compare import diff_evaluations, item_passes, stored_judge_budget
from rag_assets.report.html import render_report
from tests.report.test_html import sample_data

THRESHOLDS = {"faithfulness": 0.8, "context_recall": 0.7}


def _values() -> tuple[dict, dict, dict]:
    a = {(f"q-{i}", 1): {"faithfulness": 0.9, "context_recall": 0.8} for i in range(6)}
    b = {key: dict(values) for key, values in a.items()}
    b[("q-3", 1)]["faithfulness"] = 0.2  # the planted change: one item loses its grounding
    b[("q-4", 1)]["context_recall"] = 0.85  # and one gains a little, staying a pass
    types = {key: "factual" if int(key[0][2:]) % 2 else "multi_hop" for key in a}
    return a, b, types


def test_diff_names_deltas_flips_and_the_paired_test() -> None:
    a, b, types = _values()
    answers_a = {f"q-{i}": f"answer {i}" for i in range(6)}
    answers_b = {**answers_a, "q-3": "a different, invented answer"}
    diff = diff_evaluations("ev-a", "ev-b", a, b, types, answers_a, answers_b, THRESHOLDS,
                            ["faithfulness", "answer_relevance", "context_recall"])
    assert diff.metrics == ("faithfulness", "context_recall")  # a metric neither side has is left out
    assert [i.item_id for i in diff.flips] == ["q-3"]
    assert (diff.flips[0].passed_a, diff.flips[0].passed_b) == (True, False)
    assert [i.item_id for i in diff.changed] == ["q-3", "q-4"]
    assert diff.flips[0].delta("faithfulness") == pytest.approx(-0.7)
    assert (diff.flips[0].answer_a, diff.flips[0].answer_b) == ("answer 3", "a different, invented answer")
    faith = next(c for c in diff.comparison.comparisons if c.metric == "faithfulness" and c.scope == "overall")
    # diffs A - B: one 0.7 and five 0; exactly half of the 64 sign patterns reach the observed mean
    assert (faith.n, faith.p_worse) == (6, 0.5) and faith.delta == pytest.approx(-0.7 / 6)
    text = diff.markdown()
    assert "6 items, 2 changed, 1 flipped pass/fail." in text
    assert "| q-3 | factual | pass | fail | faithfulness -0.700 |" in text
    assert "| q-3 | -0.700 | +0.000 | answer 3 | a different, invented answer |" in text
    assert "## Paired tests per metric (B vs A): **" in text


def test_items_only_on_one_side_and_pass_rule() -> None:
    a, b, types = _values()
    del b[("q-5", 1)]
    diff = diff_evaluations("ev-a", "ev-b", a, b, types, {}, {}, THRESHOLDS, ["faithfulness"])
    gone = next(i for i in diff.items if i.item_id == "q-5")
    assert (gone.passed_a, gone.passed_b, gone.flipped, gone.delta("faithfulness")) == (True, None, False, None)
    assert item_passes({"faithfulness": 0.8}, THRESHOLDS) and not item_passes({"faithfulness": 0.79}, THRESHOLDS)
    assert item_passes({"answer_relevance": 0.1}, THRESHOLDS)  # no threshold on it


def test_report_section_against_the_baseline() -> None:
    a, b, types = _values()
    diff = diff_evaluations("ev-a", "ev-b", a, b, types, {"q-3": "<old>"}, {"q-3": "new"}, THRESHOLDS,
                            ["faithfulness", "context_recall"])
    page = render_report(replace(sample_data(), baseline=diff))
    section = page[page.index('<section id="baseline">'):page.index('<section id="items">')]
    assert "2 items changed, 1 flipped pass/fail" in section
    assert "<td><code>q-3</code></td><td>pass → fail</td><td>faithfulness -0.700</td><td>&lt;old&gt;</td><td>new</td>" in section
    assert "No data: no baseline evaluation" in render_report(sample_data())
    assert '<p class="note">Note' not in section
    noted = replace(diff, note="judge-scored metrics not compared: <ev-a> was judged by another judge configuration")
    assert ('<p class="note">Note: judge-scored metrics not compared: &lt;ev-a&gt; was judged by another judge '
            'configuration.</p>') in render_report(replace(sample_data(), baseline=noted))


def test_an_evaluation_whose_judge_failed_beyond_its_budget_is_not_compared_into_a_rejection() -> None:
    """`rag-assets compare` over an evaluation judged during an outage: the few items it judged decided a REJECT; the
    A/B comparison says it cannot be decided, and so does this."""
    a, b, types = _values()
    for key in b:
        b[key]["faithfulness"] = 0.0
    stored = {"max_failure_rate": 0.05, "judge_failures": [{"metric": "faithfulness", "failed": 5, "items": 6}]}
    budgets = {"ev-a": stored_judge_budget({}), "ev-b": stored_judge_budget(stored)}

    rejected = diff_evaluations("ev-a", "ev-b", a, b, types, {}, {}, THRESHOLDS, ["faithfulness"])
    undecided = diff_evaluations("ev-a", "ev-b", a, b, types, {}, {}, THRESHOLDS, ["faithfulness"], unjudged=budgets)

    assert rejected.comparison.recommendation == "REJECT"
    assert (undecided.comparison.recommendation, undecided.comparison.undecided) == ("REVIEW", True)
    assert undecided.comparison.reasons[0] == ("cannot be decided: ev-b faithfulness: 5 of 6 items (83.3%) not "
                                               "judged; budget 5%")
