"""The budget gate through Dagster: the evaluation's judge steps against the fake Messages API, counted there."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.app.golden_import import import_golden_file
from rag_assets.cli.failures import failed_steps
from rag_assets.defs.assets.corpus import corpus_snapshot
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.generation import question_candidates
from rag_assets.defs.assets.golden import golden_set
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES, LLMResource
from rag_assets.llm.pricing import cost_usd
from tests.defs.lifecycle import LifecycleRun, current_version, metadata, step_errors
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY, generation_responder
from tests.fakes.claude_judge import judge_responder

# Resolved once, at import (see tests/defs/test_shards.py).
_JOBS = dg.Definitions(assets=[corpus_snapshot, question_candidates, rag_answers, evaluation], resources=RESOURCES,
                       jobs=[dg.define_asset_job("evaluate", selection="evaluation"),
                             dg.define_asset_job("generate", selection=[corpus_snapshot, question_candidates])])
EVALUATE, GENERATE = _JOBS.resolve_job_def("evaluate"), _JOBS.resolve_job_def("generate")


def _evaluate(instance: dg.DagsterInstance, version: str, server: FakeAnthropicServer, *,
              run_max_usd: float | None = None, asset_max_usd: float | None = None) -> dg.ExecuteInProcessResult:
    llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0,
                      max_concurrency=1, max_cost_usd=run_max_usd)
    return EVALUATE.execute_in_process(
        partition_key=version, instance=instance, resources={**RESOURCES, "llm": llm}, raise_on_error=False,
        run_config={"ops": {"evaluation": {"config": {"max_cost_usd": asset_max_usd}}}})


def _expensive(body: dict) -> Reply:
    """The judge's answer, billed 2,000,000 input tokens ($4 on Sonnet 5.5) whatever its prompt."""
    reply = judge_responder(body)
    return Reply(tool_input=reply.tool_input, input_tokens=2_000_000, output_tokens=100)


@pytest.fixture
def lifecycle(lifecycle_run: LifecycleRun):
    """The sample corpus through the offline lifecycle (golden set, RAG answers), the bundled review applied:
    (instance, corpus version). The module's one lifecycle run, put back before each test (``lifecycle_run``)."""
    with lifecycle_run.instance() as instance:
        yield instance, lifecycle_run.version


def test_an_evaluation_whose_estimate_exceeds_the_asset_budget_fails_without_a_request(lifecycle):
    with FakeAnthropicServer(judge_responder) as server:
        result = _evaluate(*lifecycle, server, asset_max_usd=0.001)
        assert server.count() == 0
    assert not result.success
    message = "\n".join(step_errors(result))
    assert "judge budget: the estimated cost $" in message
    assert "of evaluation (" in message and "exceeds its budget: $0.0010, of which $0.0000 is spent" in message
    assert "RAG_ASSETS_MAX_COST_USD" in message


def test_an_evaluation_that_passes_its_run_budget_stops_and_a_rerun_pays_only_for_the_rest(lifecycle):
    with FakeAnthropicServer(_expensive) as server:
        stopped = _evaluate(*lifecycle, server, run_max_usd=10.0)  # the estimate is about $2.50
        # one at a time: $0, $4, $8 spent before each of three requests; then $12 > $10
        assert server.count() == 3
        assert not stopped.success
        assert "3 calls were answered and are kept in the LLM cache" in "\n".join(step_errors(stopped))
        rerun = _evaluate(*lifecycle, server, run_max_usd=10_000.0)
        meta = metadata(rerun, "evaluation")
        assert server.count() == 3 + meta["llm_api_requests"]
    # the 3 paid answers (and calls identical to one of them) come from the cache; only the rest is asked
    assert meta["llm_cache_hits"] >= 3 and meta["llm_cache_hits"] + meta["llm_api_requests"] == meta["llm_calls"]
    written, read = meta["llm_prompt_cache_write_tokens"], meta["llm_prompt_cache_read_tokens"]
    assert meta["llm_input_tokens"] == meta["llm_api_requests"] * 2_000_000 and read > 0
    assert meta["llm_cost_usd"] == pytest.approx(cost_usd("claude-sonnet-5-5", meta["llm_input_tokens"] - written - read,
                                                          meta["llm_output_tokens"], cache_write_tokens=written,
                                                          cache_read_tokens=read), abs=1e-6)
    assert meta["llm_estimated_cost_usd"] > 0


def test_question_generation_over_its_budget_fails_before_any_request_and_offline_never_does(project_env: Path):
    version = current_version()
    config = {"ops": {"question_candidates": {"config": {"max_tasks": 12, "max_cost_usd": 0.01}}}}
    with dg.instance_for_test() as instance, FakeAnthropicServer(generation_responder) as server:
        instance.add_dynamic_partitions(corpus_versions.name, [version])
        claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url)
        # 12 calls of at most 1,500 output tokens: $0.18 of output alone
        failed = GENERATE.execute_in_process(partition_key=version, instance=instance, run_config=config,
                                             resources={**RESOURCES, "llm": claude}, raise_on_error=False)
        assert server.count() == 0
        offline = GENERATE.execute_in_process(partition_key=version, instance=instance, run_config=config,
                                              resources={**RESOURCES, "llm": LLMResource(provider="offline")})
    assert not failed.success
    assert "generation budget: the estimated cost $" in "\n".join(step_errors(failed))
    assert "exceeds its budget: $0.0100" in "\n".join(step_errors(failed))
    assert offline.success and metadata(offline, "question_candidates")["llm_cost_usd"] == 0.0


def _answer(instance: dg.DagsterInstance, version: str, server: FakeAnthropicServer,
            run_max_usd: float) -> tuple[dg.ExecuteInProcessResult, list[str]]:
    """rag_answers with the reference system's LLM at the fake Messages API, one request at a time."""
    llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0,
                      max_concurrency=1, max_cost_usd=run_max_usd)
    result = dg.materialize([rag_answers], partition_key=version, instance=instance, raise_on_error=False,
                            resources={**RESOURCES, "llm": llm})
    return result, [f.line() for f in failed_steps([result], {"rag_answers": "rag_answers"}, ())]


def test_rag_answers_over_the_runs_budget_fail_the_step_naming_it_and_save_no_run_with_answers_missing(
        lifecycle_run: LifecycleRun):
    """The reference system's LLM spends within the run's budget. Its stop failed the step with the raw
    BudgetExceeded, and its way on named an asset limit rag_answers does not have; it is the clear failure the other
    paid steps give, and no RAG run is saved (no answer goes missing, none becomes an item error)."""
    store = RESOURCES["store"]
    before = store.rag().latest_run(lifecycle_run.version)
    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        failed, lines = _answer(instance, lifecycle_run.version, server, 0.0)
        assert server.count() == 0, "stopped before any request"
    assert not failed.success
    (line,) = lines
    assert line.startswith("step rag_answers.answer_shard[shard_0000] of asset rag_answers failed: RAG system budget: "
                           f"the estimated cost $"), line
    assert f"of run {failed.run_id} (48 calls " in line and "exceeds its budget: $0.0000" in line
    assert line.endswith("nothing was sent. To go ahead, raise the run's limit with the llm resource's max_cost_usd "
                         "(or RAG_ASSETS_MAX_COST_USD)"), line
    with lifecycle_run.instance() as instance, FakeAnthropicServer(_expensive) as server:
        stopped, lines = _answer(instance, lifecycle_run.version, server, 1.0)  # the estimate fits; one request: $4
        assert server.count() == 1
    (line,) = lines
    assert "failed: RAG system budget: stopped: run " in line and (
        "1 calls were answered and are kept in the LLM cache; 47 were not sent") in line, line
    assert store.rag().latest_run(lifecycle_run.version).run_id == before.run_id, "no run saved with answers missing"


def test_golden_set_statements_over_the_runs_budget_fail_the_step_naming_it(lifecycle_run: LifecycleRun,
                                                                              tmp_path: Path):
    """A new item's reference answer is split into statements through the judge, within the run's budget: the stop
    is the judge's budget failure, as the evaluation's, not the raw BudgetExceeded."""
    store = RESOURCES["store"]
    chunk = store.corpus().snapshot_chunks(lifecycle_run.version)[0]
    team = tmp_path / "team.jsonl"
    team.write_text(json.dumps({"id": "budget", "user_input": "What does the first page say?",
                                "reference": "What the first page says.", "reference_contexts": [chunk.text]}) + "\n",
                    encoding="utf-8")
    import_golden_file(store, team, "ragas", None, lambda: lifecycle_run.version)
    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_cost_usd=0.0)
        result = dg.materialize([golden_set], partition_key=lifecycle_run.version, instance=instance,
                                raise_on_error=False, resources={**RESOURCES, "llm": llm})
        assert server.count() == 0, "stopped before any request"
    (failed,) = failed_steps([result], {"golden_set": "golden_set"}, ())
    assert failed.line().startswith("step golden_set of asset golden_set failed: judge budget: the estimated cost $")
    assert f"of run {result.run_id} (1 calls " in failed.error and "exceeds its budget: $0.0000" in failed.error
    assert failed.error.endswith("(or RAG_ASSETS_MAX_COST_USD)"), failed.error
