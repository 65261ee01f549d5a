"""Dagster's re-execution from failure of an evaluation whose merge failed: only the merge runs again,
and it reads the judge-shard outcomes its parent run handed over through the store, those with failed
judge calls included (kept under the run's root for this)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES, LLMResource
from tests.defs.lifecycle import current_version, metadata, run_job, stage_sample_review
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY

PARTITION_TAG = "dagster/partition"
CONFIG = {"ops": {"evaluation": {"config": {"shard_size": 10, "severity": "WARN"}}}}


# Resolved once, at import (see test_shards.py): the judge is Claude at the URL the environment names at run time.
_JOB = dg.Definitions(
    assets=[rag_answers, evaluation],
    resources={**RESOURCES, "llm": LLMResource(provider="anthropic", api_key=dg.EnvVar("ANTHROPIC_API_KEY"),
                                               base_url=dg.EnvVar("ANTHROPIC_BASE_URL"))},
    jobs=[dg.define_asset_job("evaluate", selection="evaluation", executor_def=dg.in_process_executor)],
).resolve_job_def("evaluate")


def evaluate_job() -> dg.JobDefinition:
    """The evaluation alone, every step in one process (reconstructable: a re-execution rebuilds it)."""
    return _JOB


def _steps(result: dg.ExecutionResult, succeeded: bool) -> list[str]:
    return sorted(e.step_key for e in result.all_events if (e.is_step_success if succeeded else e.is_step_failure))


def _materialized(instance: dg.DagsterInstance, run_id: str) -> dict:
    (record,) = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    return {k: v.value for k, v in record.event_log_entry.asset_materialization.metadata.items()}


@pytest.mark.slow
def test_a_reexecuted_merge_reads_its_parent_runs_shards_with_failed_judge_calls_and_pays_nothing(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    version = current_version()
    stage_sample_review(version)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    instance = dg.DagsterInstance.get()
    offline = metadata(run_job(instance, "lifecycle", version), "evaluation")
    monkeypatch.setattr(claude_judge, "BROKEN", {"record_judge_context_precision"})
    reports = RESOURCES["store"].report_dir()
    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        shutil.rmtree(reports)
        reports.write_text("a file where the reports folder goes: the merge cannot write its report")
        job = dg.reconstructable(evaluate_job)
        with dg.execute_job(job, instance, run_config=CONFIG, tags={PARTITION_TAG: version},
                            raise_on_error=False) as first:
            assert _steps(first, succeeded=False) == ["evaluation.score_evaluation"]
            shards = [k for k in _steps(first, succeeded=True) if k.startswith("evaluation.judge_shard[")]
            assert len(shards) == -(-offline["items"] // 10)
        paid = server.count()
        assert paid > 0
        reports.unlink()
        with dg.execute_job(job, instance, reexecution_options=dg.ReexecutionOptions.from_failure(
                first.run_id, instance), tags={PARTITION_TAG: version}, raise_on_error=False) as again:
            assert _steps(again, succeeded=True) == ["evaluation.score_evaluation"], [e.step_failure_data.error.message for e in again.all_events if e.is_step_failure]
            assert _steps(again, succeeded=False) == []
            meta = _materialized(instance, again.run_id)
        assert server.count() == paid  # nothing judged again
    assert meta["judge"].startswith("anthropic") and meta["items"] == offline["items"]
    assert meta["judge_failures"] > 0 and meta["evaluation_id"] != offline["evaluation_id"]
    assert Path(meta["report"]).is_file()
