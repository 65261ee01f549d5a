"""ab_comparison through Dagster: the configured system against a named candidate; against itself it is
approved, a weaker variant is not; a team's own system with no candidate named is not compared."""

from __future__ import annotations

import dagster as dg
import pytest

from rag_assets.definitions import defs
from rag_assets.defs.assets.ab import ab_comparison
from rag_assets.defs.freshness import judged_with_failures, stale_selection
from rag_assets.defs.jobs import build_lifecycle_job
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.resources import RESOURCES, LLMResource, RagSystemResource
from tests.defs.lifecycle import LifecycleRun, check_evaluations, failed_step_error, metadata
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder


def _compare(instance, version: str, candidate: dict):
    config = {"ops": {"ab_comparison": {"config": {"candidate": candidate}}}}
    return dg.materialize([ab_comparison], partition_key=version, instance=instance, resources=RESOURCES,
                          run_config=config)


def test_a_system_against_itself_is_approved_and_a_k1_variant_is_not(lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance:
        same = _compare(instance, version, {"name": "reference-again", "k": 5})
        meta = metadata(same, "ab_comparison")
        assert meta["recommendation"] == "APPROVE" and meta["delta_faithfulness"] == 0.0 and meta["decided"] is True
        assert check_evaluations(same)["ab_not_rejected"].passed
        weaker = _compare(instance, version, {"name": "reference-k1", "k": 1})
        meta = metadata(weaker, "ab_comparison")
        assert meta["recommendation"] in ("REJECT", "REVIEW")
        assert meta["delta_recall@5"] < 0 and "significant regression: recall@5: delta" in meta["comparison"]
        assert check_evaluations(weaker)["ab_not_rejected"].description.startswith(meta["recommendation"])


def _no_faithfulness(body: dict) -> Reply:
    """The fake Claude judge, but every faithfulness call gets an answer outside its schema."""
    if body["tool_choice"]["name"] == "record_judge_faithfulness":
        return Reply(tool_input={"unexpected": True})
    return judge_responder(body)


def test_a_comparison_whose_faithfulness_calls_all_failed_cannot_be_decided(lifecycle_run: LifecycleRun):
    """The tester's case: every faithfulness call failed, faithfulness dropped out of the pairs and the system against
    itself was approved on what was left."""
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance, FakeAnthropicServer(_no_faithfulness) as server:
        claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0)
        result = dg.materialize([ab_comparison], partition_key=version, instance=instance,
                                resources={**RESOURCES, "llm": claude},
                                run_config={"ops": {"ab_comparison": {"config": {"candidate": {
                                    "name": "reference-again", "k": 5}}}}})
    meta = metadata(result, "ab_comparison")
    assert meta["recommendation"] == "REVIEW" and "delta_faithfulness" not in meta
    check = check_evaluations(result)["ab_not_rejected"]
    assert check.description.startswith(
        "REVIEW: cannot be decided: current faithfulness: 48 of 48 items (100.0%) not judged; budget 5%; "
        "cannot be decided: current citation_accuracy: 48 of 48 items (100.0%) not judged; budget 5%; ")
    assert "- cannot be decided: candidate faithfulness: 48 of 48 items (100.0%) not judged; budget 5%" in meta[
        "comparison"]
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN, "no verdict on the systems: not green"


def test_a_candidate_whose_answers_all_errored_cannot_be_decided_and_is_compared_again_by_the_next_run(
        lifecycle_run: LifecycleRun):
    """The tester's case: the key was revoked mid-way and the candidate's answers all errored; the comparison REJECTed
    it on a faithfulness drop of -1, and a re-run with a working key kept that REJECT (ab_comparison was fresh)."""
    version = lifecycle_run.version
    lifecycle = build_lifecycle_job(BUNDLED).selection
    with lifecycle_run.instance() as instance:
        result = _compare(instance, version, {"name": "revoked", "kind": "callable",
                                              "target": "tests.fakes.rag_systems:revoked"})
        meta = metadata(result, "ab_comparison")
        assert meta["recommendation"] == "REVIEW" and meta["errors"] == 48 and meta["judge_failures"] == 0
        assert meta["decided"] is False
        check = check_evaluations(result)["ab_not_rejected"]
        assert not check.passed and check.description.startswith(
            "REVIEW: cannot be decided: candidate RAG answers: 48 of 48 items errored (100.0%, budget 5.0%); "
            "exception x48, e.g. "), check.description
        assert "PermissionError: 401 authentication_error: invalid x-api-key" in check.description
        stale = {key.to_user_string() for key in stale_selection(instance, defs, lifecycle, version)}
        assert "ab_comparison" in stale, "a comparison resting on failed answers is asked again by the next run"
        _compare(instance, version, {"name": "reference-again", "k": 5})
        stale = {key.to_user_string() for key in stale_selection(instance, defs, lifecycle, version)}
        assert "ab_comparison" not in stale, "a comparison without failures stands"


def test_a_teams_own_system_with_no_candidate_named_is_skipped_with_the_reason(lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    own = RagSystemResource(kind="callable", target="rag_assets.examples.callable_system:answer")
    with lifecycle_run.instance() as instance:
        result = dg.materialize([ab_comparison], partition_key=version, instance=instance,
                                resources={**RESOURCES, "rag": own})
        meta = metadata(result, "ab_comparison")
        assert meta["recommendation"] == "SKIPPED" and meta["reason"].startswith(
            "only one system is configured (rag_assets.examples.callable_system:answer): name a candidate")
        check = check_evaluations(result)["ab_not_rejected"]
        assert check.passed and check.description.startswith("not applicable: only one system is configured")
        named = dg.materialize([ab_comparison], partition_key=version, instance=instance,
                               resources={**RESOURCES, "rag": own},
                               run_config={"ops": {"ab_comparison": {"config": {"candidate": {"name": "reference-k5"}}}}})
        shown = metadata(named, "ab_comparison")
        assert (shown["current"], shown["candidate"]) == ("rag_assets.examples.callable_system:answer", "reference-k5")


def test_the_contenders_are_the_configured_system_and_the_named_or_demo_candidate():
    from rag_assets.defs.assets.ab import DEMO_CANDIDATE, SystemSpec, contenders

    reference = RagSystemResource(k=4)
    assert contenders(reference, None) == (SystemSpec(name="reference-k4", k=4), DEMO_CANDIDATE)
    own = RagSystemResource(kind="http", target="http://rag.internal/ask")
    assert contenders(own, None) is None, "a team's own system is compared only with a named candidate"
    named = SystemSpec(name="v2", kind="callable", target="mod:fn")
    assert contenders(own, named) == (SystemSpec(name="http://rag.internal/ask", kind="http",
                                                 target="http://rag.internal/ask"), named)


def test_a_comparison_over_the_runs_or_its_own_budget_sends_no_request_and_fails_naming_it(lifecycle_run: LifecycleRun):
    """The candidate's answers and the judge spend within the run's budget (the llm resource's) and the asset's
    (max_cost_usd)."""
    def compare(run_max: float | None, asset_max: float | None) -> str:
        claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0,
                             max_cost_usd=run_max)
        config = {"candidate": {"name": "reference-again", "k": 5}}
        if asset_max is not None:
            config["max_cost_usd"] = asset_max
        result = dg.materialize([ab_comparison], partition_key=lifecycle_run.version, instance=instance,
                                resources={**RESOURCES, "llm": claude}, raise_on_error=False,
                                run_config={"ops": {"ab_comparison": {"config": config}}})
        error = failed_step_error(result)
        assert "A/B comparison budget: the estimated cost $" in error and "nothing was sent" in error, error
        return error

    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        assert "of run RUN (" in compare(0.0, None)
        assert "of ab_comparison (" in compare(None, 0.0)
        assert server.count() == 0, "stopped before any request"


def billed_usd(server: FakeAnthropicServer) -> float:
    """What the fake billed for its answered requests, by hand at the price the project uses for claude-sonnet-4
    ($3 per million input tokens, $15 per million output tokens; a prompt-cache write at 1.25 times the input
    price, a read at 0.1 times)."""
    total = 0.0
    for request in server.requests:
        if request.status != 200 or request.usage is None:
            continue
        assert request.body["model"] == "claude-sonnet-4-5"
        usage = request.usage
        total += (usage["input_tokens"] * 3.0 + usage.get("cache_creation_input_tokens", 0) * 3.0 * 1.25
                  + usage.get("cache_read_input_tokens", 0) * 3.0 * 0.1 + usage["output_tokens"] * 15.0) / 1e6
    return total


def test_a_comparisons_llm_spend_is_in_its_metadata_as_the_other_paid_assets_show_it(lifecycle_run: LifecycleRun):
    """The tester's case: the comparison (a reference system's answers and the judge) spent the most of the
    lifecycle, and its metadata had no llm_cost_usd."""
    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0,
                             model="claude-sonnet-4-5", judge_model="claude-sonnet-4-5")
        result = dg.materialize([ab_comparison], partition_key=lifecycle_run.version, instance=instance,
                                resources={**RESOURCES, "llm": claude},
                                run_config={"ops": {"ab_comparison": {"config": {"candidate": {
                                    "name": "reference-again", "k": 5}}}}})  # its calls are the cache's: fast
    meta = metadata(result, "ab_comparison")
    billed = billed_usd(server)
    assert billed > 0 and meta["llm_cost_usd"] == pytest.approx(billed, abs=1e-5)
    assert meta["llm_api_requests"] == server.count(status=200) and meta["llm_model"] == "claude-sonnet-4-5"


def test_a_comparison_decided_despite_a_few_failures_is_not_made_again_but_an_undecided_one_is():
    """A candidate failing for good on one item in 48 (within the error budget) was compared again, and paid for,
    on every run: only failures that left the comparison undecided make it stale."""
    def comparison(decided: bool) -> dg.AssetMaterialization:
        return dg.AssetMaterialization("ab_comparison", metadata={"errors": 1, "judge_failures": 0,
                                                                  "decided": decided})

    assert not judged_with_failures(comparison(True))
    assert judged_with_failures(comparison(False))
    assert judged_with_failures(dg.AssetMaterialization("evaluation", metadata={"judge_failures": 1}))
