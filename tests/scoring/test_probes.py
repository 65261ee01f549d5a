"""Judge probes on hand-built items: what each probe changes, when it passes, how many items it takes."""

from __future__ import annotations

import math

import pytest

from rag_assets.app.probes import ProbeOutcome
from rag_assets.calibration.models import JudgeConfig
from rag_assets.defs.assets.probes import _metadata
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.models import RagResponse, RetrievedChunk
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.evaluate import evaluate
from rag_assets.scoring.probes import (FABRICATED_CLAIM, PROBES, ProbeResult, ProbeSettings, probe_sample_size,
                                       probe_verdict, probe_lines, run_probes, self_preference, stratified_sample)
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY

LIMITS = "The API allows 50 requests per minute for each key."
ROTATE = "To rotate a key, create a new key and then delete the old key."
EXPORT = "Exports are written as CSV files to the export folder every night."


def _item(item_id: str, question: str, kind: str = "factual") -> GoldenItem:
    return GoldenItem(item_id, 1, kind, question, "r", (), "cv-1", "test")


def _response(item_id: str, answer: str, *texts: str) -> RagResponse:
    return RagResponse(item_id, answer, tuple(RetrievedChunk(f"c{n}-{item_id}", t, 1.0, n) for n, t in enumerate(texts, 1)))


ITEMS = [_item("a", "How many requests per minute does the API allow for each key?"),
         _item("b", "How do you rotate a key?", "procedural"),
         _item("c", "Where are exports written every night?")]
RESPONSES = {"a": _response("a", LIMITS, LIMITS, EXPORT), "b": _response("b", ROTATE, ROTATE, LIMITS),
             "c": _response("c", EXPORT, EXPORT, ROTATE)}


def test_each_probe_tells_its_expectation_apart():
    drop, not_rise, same = (next(p for p in PROBES if p.expect == kind) for kind in ("drop", "not_rise", "same"))
    assert drop.holds(0.8, 0.5) and not drop.holds(0.8, 0.8) and not drop.holds(0.5, 0.8)
    assert not_rise.holds(0.8, 0.8) and not_rise.holds(0.8, 0.2) and not not_rise.holds(0.5, 0.6)
    assert same.holds(0.7, 0.7) and not same.holds(0.7, 0.69)


def test_the_probes_change_only_what_they_name():
    item, response = ITEMS[0], RESPONSES["a"]
    others = [RESPONSES["b"], RESPONSES["c"]]
    changed = {p.name: p.change(item, response, others) for p in PROBES}
    assert changed["fabricated_claim"].answer == f"{LIMITS} {FABRICATED_CLAIM}"
    assert LIMITS in changed["filler"].answer and len(changed["filler"].answer) > 3 * len(LIMITS)
    assert changed["other_answer"].answer == EXPORT, "of the other answers, the one sharing no word with the question"
    assert [c.text for c in changed["reversed_contexts"].retrieved] == [EXPORT, LIMITS]
    assert [c.rank for c in changed["reversed_contexts"].retrieved] == [1, 2]
    assert {c.text for c in changed["unrelated_contexts"].retrieved} == {ROTATE}, "other items' contexts it lacks"
    assert changed["repeat"] is response


def test_the_offline_judge_passes_every_probe_it_can_be_tested_on():
    client, embedder = OfflineClient(), make_embedder()
    base = evaluate(ITEMS, RESPONSES, {}, {}, client, None, embedder, 5)
    results, stats = run_probes(ITEMS, RESPONSES, {i.item_id: i.values for i in base.items}, {}, client, None, embedder,
                                5)
    by_name = {r.name: r for r in results}
    assert set(by_name) == {p.name for p in PROBES} and stats.calls == sum(r.tested + r.judge_failures for r in results)
    assert (stats.cache_misses, stats.cache_hits) == (stats.calls, 0), "without a cache every call is sent"
    assert by_name["fabricated_claim"].tested == 3 and by_name["fabricated_claim"].pass_rate == 1.0
    assert all(r.pass_rate == 1.0 for r in results if r.tested), [(r.name, r.failed_items) for r in results]


def test_a_probe_below_the_minimum_fails_the_verdict_and_names_its_rate():
    results = [ProbeResult("fabricated_claim", "faithfulness", "drop", tested=3, passed=0, failed_items=["a", "b", "c"]),
               ProbeResult("repeat", "faithfulness", "same", tested=3, passed=3)]
    assert probe_verdict(results, 0.9) == (False, "below 0.90: fabricated_claim 0.00")


def test_the_verdict_passes_on_good_probes_and_never_fails_on_what_does_not_apply():
    good = ProbeResult("repeat", "faithfulness", "same", tested=4, passed=4)
    idle = ProbeResult("unrelated_contexts", "context_precision", "drop")
    unanswered = ProbeResult("filler", "answer_relevance", "not_rise", judge_failures=4)
    assert probe_verdict([good, idle], 0.9) == (
        True, "1 of 2 probes at or above 0.90; not applicable (no item could show it): unrelated_contexts")
    assert probe_verdict([good, unanswered], 0.9) == (False, "the judge answered no call of: filler")
    assert math.isnan(idle.pass_rate)


@pytest.mark.parametrize(("items", "calls", "wanted", "size"), [
    (500, 2000, 20, 20),   # 7 probes x 20 items = 140 calls = 7% of 2,000
    (1000, 4000, 100, 85),  # 15% of 4,000 is 600 calls: 85 items of 7 calls
    (54, 204, 20, 10),     # 15% of 204 would be 4 items: 10 at least
    (3, 12, 20, 3),        # never more than there are
    (0, 0, 20, 0),
    (500, 2000, 5, 5),
    # from 500 items on the 15% cap wins over the 10-item minimum: 7 calls per item, so 10 items need 467 calls
    (500, 467, 20, 10),    # 15% of 467 is 70.05 calls: 10 items, 70 calls (14.99%)
    (500, 466, 20, 9),     # 15% of 466 is 69.9 calls: 9 items, 63 calls (13.5%); 10 would be 70 (15.02%)
    (499, 466, 20, 10),    # below 500 items the minimum wins: 10 items, 70 calls (15.02%)
    (1000, 400, 20, 8),    # 0.4 calls per item: 15% is 60 calls, 8 items (56 calls, 14%)
    (1000, 0, 20, 0),      # no judge call to add 15% to: no probe
])
def test_the_sample_is_the_setting_or_what_15_percent_of_the_evaluations_calls_allow(items, calls, wanted, size):
    """At least ten items below 500, where a small evaluation pays a larger share for a readable pass rate."""
    assert probe_sample_size(items, calls, wanted) == size
    if items >= 500:
        assert size * len(PROBES) <= 0.15 * calls


def test_the_probe_settings_version_is_the_same_for_the_same_settings_and_differs_for_others():
    default = ProbeSettings()
    assert default.version == ProbeSettings(20, 0.9).version and default.version.startswith("probes-")
    assert len({default.version, ProbeSettings(12).version, ProbeSettings(20, 0.8).version}) == 3


def test_the_sample_takes_every_question_type_before_any_twice_and_leaves_out_declines_and_errors():
    items = [_item(f"f{n}", "q?") for n in range(4)] + [_item("p0", "q?", "procedural"),
                                                        _item("x0", "q?", "adversarial"), _item("e0", "q?")]
    responses = {i.item_id: _response(i.item_id, "an answer") for i in items}
    responses["e0"] = RagResponse("e0", None, error="timeout")
    sample = stratified_sample(items, responses, 3, "seed")
    assert len(sample) == 3 and "p0" in {i.item_id for i in sample}
    assert not {"x0", "e0"} & {i.item_id for i in stratified_sample(items, responses, 10, "seed")}
    assert stratified_sample(items, responses, 3, "seed") == sample, "the same seed, the same sample"


def test_self_preference_names_what_the_judges_own_model_wrote_and_never_blames_the_offline_heuristics():
    generators = {"question_candidates": "claude-sonnet-4-5", "rag_answers": "claude-haiku-4-5", "other": None}
    assert self_preference("anthropic", "claude-haiku-4-5", generators) == ["rag_answers"]
    assert self_preference("anthropic", "claude-opus-4-1", generators) == []
    assert self_preference("offline", "offline-heuristics-v1", {"rag_answers": "offline-heuristics-v1"}) == []


def test_the_report_line_of_each_metric_gives_its_probes_pass_rates_and_the_evaluation_they_ran_on():
    lines = probe_lines({"fabricated_claim": 1.0, "reversed_contexts": 0.95, "noncommittal": 0.5, "repeat": 1.0,
                         "not_a_probe": 0.1}, "ev-7")
    assert lines == {
        "faithfulness": "judge probes on ev-7: fabricated_claim 1.00, reversed_contexts 0.95, repeat 1.00",
        "answer_relevance": "judge probes on ev-7: noncommittal 0.50"}
    assert probe_lines({}, "ev-7") == {}


PRECISION_TOOL = "record_judge_context_precision"
#: ten items; the judge fails the context precision call of the first six (a schema-invalid answer, repaired once)
PROBED = [_item(f"i{n}", f"What does setting number {n} control?") for n in range(10)]
PROBED_RESPONSES = {i.item_id: _response(i.item_id, f"Setting {n} controls part {n}.",
                                        f"Setting {n} controls part {n}.") for n, i in enumerate(PROBED)}
FAILING = {f"What does setting number {n} control?" for n in range(6)}


def _failing_precision(body: dict) -> Reply:
    """Claude's context precision on another item's contexts: none useful (the probe passes), except on the six
    items where the judge's answer does not match the schema."""
    reply = claude_judge.judge_responder(body)
    if body["tool_choice"]["name"] != PRECISION_TOOL:
        return reply
    if any(question in str(body["messages"][0]["content"]) for question in FAILING):
        return Reply(tool_input={"unexpected": True})
    return Reply(tool_input={"verdicts": [{**v, "useful": False} for v in reply.tool_input["verdicts"]]})


def test_failed_judge_calls_count_against_a_probe_and_fail_the_check():
    """A tester's judge failed 6 of 10 context precision probe calls: the probe showed tested 4, passed 4 (1.000)
    and the check passed, so a probe answered on one item of ten would have passed."""
    base = {i.item_id: {"context_precision": 1.0} for i in PROBED}
    with FakeAnthropicServer(_failing_precision) as server:
        judge = AnthropicClient(API_KEY, "claude-sonnet-5-5", base_url=server.base_url, max_retries=0)
        results, stats = run_probes(PROBED, PROBED_RESPONSES, base, {}, judge, None, make_embedder(), 5)
    unrelated = next(r for r in results if r.name == "unrelated_contexts")
    assert (unrelated.tested, unrelated.passed, unrelated.judge_failures) == (4, 4, 6) and stats.calls == 10
    assert unrelated.pass_rate == 0.4, "4 passed of the 10 items probed: a failed call is no pass"
    idle = ", ".join(p.name for p in PROBES if p.name != "unrelated_contexts")
    assert probe_verdict(results, 0.9) == (
        False, "below 0.90: unrelated_contexts 0.40 (6 of 10 judge calls failed); "
               f"not applicable (no item could show it): {idle}")
    outcome = ProbeOutcome("ev-1", 10, stats, 100, results)
    shown = _metadata(outcome, JudgeConfig.of(judge, "hashing"))
    assert shown["probe_judge_failures"].value == 6 and shown["pass_rate/unrelated_contexts"].value == 0.4
    assert ("| unrelated_contexts | context_precision | drop | 4 | 6 | 4 | 0.400 |"
            in shown["probes"].value.split("\n")), shown["probes"].value


def test_a_passing_probe_with_failed_calls_says_so_and_an_unanswered_one_has_a_pass_rate_of_0():
    mostly = ProbeResult("repeat", "faithfulness", "same", tested=19, passed=19, judge_failures=1)
    unanswered = ProbeResult("filler", "answer_relevance", "not_rise", judge_failures=4)
    assert mostly.pass_rate == 0.95 and unanswered.pass_rate == 0.0
    assert probe_verdict([mostly], 0.9) == (
        True, "1 of 1 probes at or above 0.90; failed judge calls counted as misses: "
              "repeat (1 of 20 judge calls failed)")
