"""The judge_probes asset and its check on the real Dagster machinery: the offline judge passes its probes;
a lenient Claude-like judge behind the fake Messages API (every claim grounded, whatever the answer says)
fails the check, and the failure names the probe. The probes' calls count those sent to the judge apart from
those the LLM cache answered, and a change of the probe settings makes the asset stale."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from rag_assets.calibration.models import JudgeConfig
from rag_assets.cli.failures import failed_steps
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.probes import (PROBES_CHECK, SELF_PREFERENCE_CHECK, build_judge_probes, judge_probes,
                                           last_probe_lines)
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.freshness import stale_selection
from rag_assets.defs.graph import build_definitions
from rag_assets.defs.jobs import build_lifecycle_job
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.resources import RESOURCES, LLMResource
from rag_assets.scoring.judge_prompts import JUDGE_TEMPLATES_REF
from tests.defs.lifecycle import LifecycleRun, check_evaluations, metadata
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder


def test_the_offline_judge_passes_its_probes_and_a_lenient_claude_judge_fails_them(lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance:
        result = lifecycle_run.result
        shown = metadata(result, "judge_probes")
        check = check_evaluations(result)[PROBES_CHECK]
        assert check.passed, check.description
        assert shown["items_probed"] == 10 and shown["share_of_evaluation_calls"] == round(
            (shown["probe_calls"] + shown["probe_cached"]) / shown["evaluation_judge_calls"], 4)
        assert shown["evaluation_judge_calls"] == metadata(result, "evaluation")["llm_calls"], "counted alike"
        assert shown["pass_rate/fabricated_claim"] == 1.0 and shown["pass_rate/repeat"] == 1.0

        with FakeAnthropicServer(judge_responder) as server:
            claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url,
                                 model="claude-haiku-4-5", judge_model="claude-haiku-4-5")
            resources = {**RESOURCES, "llm": claude}
            scored = dg.materialize([rag_answers, evaluation], partition_key=version, instance=instance,
                                    resources=resources, raise_on_error=False,
                                    run_config={"ops": {"evaluation": {"config": {"judge_review_sample": 0}}}})
            assert metadata(scored, "evaluation")["judge"] == "anthropic / claude-haiku-4-5", "its gates may fail"
            assert _probe_line(scored) == ('<small class="probes">judge probes: none yet for this judge '
                                           '(anthropic / claude-haiku-4-5)'), "not the offline judge's probes"
            judged = dg.materialize([judge_probes], partition_key=version, instance=instance, resources=resources)
            assert metadata(judged, "judge_probes")["judge"].startswith("anthropic / claude-haiku-4-5, templates ")
            rescored = dg.materialize([evaluation], partition_key=version, instance=instance, resources=resources,
                                      raise_on_error=False,
                                      run_config={"ops": {"evaluation": {"config": {"judge_review_sample": 1}}}})
            claude_probed = metadata(scored, "evaluation")["evaluation_id"]
            assert _probe_line(rescored).startswith(
                f'<small class="probes">judge probes on {claude_probed}: fabricated_claim 0.00, '), \
                "its own judge's probes, of the evaluation before it"
        offline = dg.materialize([evaluation], partition_key=version, instance=instance, resources=RESOURCES,
                                 raise_on_error=False,
                                 run_config={"ops": {"evaluation": {"config": {"judge_review_sample": 1}}}})
        line = _probe_line(offline)
        probed = metadata(result, "evaluation")["evaluation_id"]
        assert line.startswith(f'<small class="probes">judge probes on {probed}: fabricated_claim 1.00, ')
        assert line.endswith(", repeat 1.00"), "the offline judge's own probes, past the newer ones of another judge"
        lenient = check_evaluations(judged)[PROBES_CHECK]
        assert not lenient.passed and lenient.severity == dg.AssetCheckSeverity.WARN
        assert lenient.description.startswith("below 0.90: fabricated_claim 0.00")
        assert metadata(judged, "judge_probes")["pass_rate/fabricated_claim"] == 0.0
        own = check_evaluations(judged)[SELF_PREFERENCE_CHECK]
        assert not own.passed and own.description.startswith(
            "the judge's model claude-haiku-4-5 also wrote rag_answers: its figures there may favour its own writing")
        assert check_evaluations(result)[SELF_PREFERENCE_CHECK].passed, "the offline heuristics prefer nothing"


def _probe_line(result: dg.ExecuteInProcessResult) -> str:
    """The first judge-probes line of the report of the evaluation ``result`` materialized."""
    report = Path(metadata(result, "evaluation")["report"]).read_text(encoding="utf-8")
    return report[report.index('<small class="probes">'):].split("</small>")[0]


def test_a_report_shows_the_newest_probes_of_its_own_judge_and_else_says_none_ran_yet():
    judges = {name: JudgeConfig(name, f"{name}-model", JUDGE_TEMPLATES_REF, "hashing") for name in ("offline", "claude")}
    evaluation_key, probes_key = BUNDLED.key("evaluation"), BUNDLED.key("judge_probes")

    def probed(evaluation_id: str, rate: float, judge: str | None) -> None:
        instance.report_runless_asset_event(dg.AssetMaterialization(probes_key, partition="cv-1", metadata={
            "evaluation_id": evaluation_id, "pass_rate/fabricated_claim": rate,
            **({"judge_config": judges[judge].key} if judge else {})}))

    with dg.instance_for_test() as instance:
        none_yet = {metric: "judge probes: none yet for this judge (claude / claude-model)"
                    for metric in ("faithfulness", "answer_relevance", "context_precision")}
        assert last_probe_lines(instance, evaluation_key, "cv-1", judges["claude"]) == none_yet
        probed("ev-0", 0.5, None)  # probes that recorded no judge (before judges were recorded)
        probed("ev-1", 0.0, "claude")
        probed("ev-2", 1.0, "offline")
        probed("ev-3", 0.9, None)
        assert last_probe_lines(instance, evaluation_key, "cv-1", judges["claude"]) == {
            "faithfulness": "judge probes on ev-1: fabricated_claim 0.00"}
        assert last_probe_lines(instance, evaluation_key, "cv-1", judges["offline"]) == {
            "faithfulness": "judge probes on ev-2: fabricated_claim 1.00"}
        assert last_probe_lines(instance, evaluation_key, "cv-2", judges["offline"]) == {
            metric: line.replace("claude / claude-model", "offline / offline-model") for metric, line in none_yet.items()}


def test_a_second_probe_run_counts_the_calls_the_cache_answered_apart_from_those_sent(lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance:
        first = metadata(lifecycle_run.result, "judge_probes")
        again = metadata(dg.materialize([judge_probes], partition_key=version, instance=instance,
                                        resources=RESOURCES), "judge_probes")
    assert (first["items_probed"], first["probe_calls"], first["probe_cached"]) == (10, 56, 0)
    # the second run asks the same 56 calls: only the repeat probe's 10 (one per item, past the cache) are sent
    assert (again["items_probed"], again["probe_calls"], again["probe_cached"]) == (10, 10, 46)
    # 180 calls judge the 48 items, 42 split the references of the 42 answerable ones into statements
    assert first["evaluation_judge_calls"] == again["evaluation_judge_calls"] == 180 + 42
    assert first["share_of_evaluation_calls"] == again["share_of_evaluation_calls"] == round(56 / 222, 4)


def test_a_change_of_the_probe_settings_makes_the_probes_stale_until_they_run_again(
        lifecycle_run: LifecycleRun, monkeypatch: pytest.MonkeyPatch):
    version = lifecycle_run.version
    lifecycle = build_lifecycle_job(BUNDLED).selection

    def stale(instance: dg.DagsterInstance) -> list[str]:
        """What ``rag-assets run`` would materialize now, under this process's settings."""
        return [key.to_user_string() for key in stale_selection(instance, build_definitions(BUNDLED, RESOURCES),
                                                                lifecycle, version)]

    with lifecycle_run.instance() as instance:
        assert stale(instance) == []
        monkeypatch.setenv("RAG_ASSETS_PROBE_SAMPLE", "5")
        assert stale(instance) == ["judge_probes"], "probes of 10 items must not pass for those of 5"
        probed = dg.materialize([build_judge_probes(BUNDLED)], partition_key=version, instance=instance,
                                resources=RESOURCES)
        assert metadata(probed, "judge_probes")["items_probed"] == 5 and stale(instance) == []
        monkeypatch.setenv("RAG_ASSETS_PROBE_MIN_PASS_RATE", "0.95")
        assert stale(instance) == ["judge_probes"], "the check's verdict was reached against 0.9"
        monkeypatch.delenv("RAG_ASSETS_PROBE_SAMPLE")
        monkeypatch.delenv("RAG_ASSETS_PROBE_MIN_PASS_RATE")
        assert stale(instance) == ["judge_probes"], "back to the defaults: the newest probes took 5 items"


def test_probes_over_the_runs_budget_send_no_request_and_fail_as_the_evaluation_does(lifecycle_run: LifecycleRun):
    """The probes' judge spends within the run's budget and its own (issue 28: "the same cache and budget"); the
    stop is one line of ``rag-assets run``'s failed steps, worded as the evaluation's."""
    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        spent = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_cost_usd=0.0)
        result = dg.materialize([judge_probes], partition_key=lifecycle_run.version, instance=instance,
                                resources={**RESOURCES, "llm": spent}, raise_on_error=False)
        assert server.count() == 0, "stopped before any request"
    assert not result.success
    (failed,) = failed_steps([result], {"judge_probes": "judge_probes"}, ())
    assert failed.line().startswith("step judge_probes of asset judge_probes failed: judge budget: the estimated cost $")
    assert f"of run {result.run_id} (" in failed.error and "exceeds its budget: $0.0000" in failed.error
    assert "nothing was sent" in failed.error and "\n" not in failed.error


def test_the_probes_llm_spend_is_in_their_metadata_as_the_other_paid_assets_show_it(lifecycle_run: LifecycleRun):
    """The tester's case: the probes' judge spent money and their metadata had no llm_cost_usd. The offline
    evaluation's statements are not the Claude judge's, so the probes split the references first: those calls are
    billed too."""
    from tests.defs.test_ab_asset import billed_usd

    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0,
                             model="claude-sonnet-4-5", judge_model="claude-sonnet-4-5")
        result = dg.materialize([judge_probes], partition_key=lifecycle_run.version, instance=instance,
                                resources={**RESOURCES, "llm": claude})
    meta = metadata(result, "judge_probes")
    billed = billed_usd(server)
    assert billed > 0 and meta["llm_cost_usd"] == pytest.approx(billed, abs=1e-5)
    assert meta["llm_api_requests"] == server.count(status=200) > meta["probe_calls"], "the splits counted too"
