"""Sharded steps: any shard size scores alike, and a killed run's finished shards are neither paid for nor
judged again."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import func, select

from rag_assets.definitions import defs
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.freshness import stale_selection
from rag_assets.defs.jobs import build_lifecycle_job
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.resources import RESOURCES, LLMResource, RagSystemResource
from rag_assets.scoring.evaluate import judge_calls
from rag_assets.shards import plan_shards
from rag_assets.store.tables import JudgedShardRow, LLMCacheRow
from tests.conftest import PROJECT_ROOT
from tests.defs.lifecycle import LifecycleRun, metadata
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY
from tests.fakes import claude_judge
from tests.fakes.claude_judge import judge_responder
from tests.fakes.rag_systems import KNOWN_CHUNK

SHARDS = 4
# Resolved once, at import: a Definitions built inside a test can meet a Dagster defs-state storage
# left behind by an earlier test's instance in the same worker process.
_JOBS = dg.Definitions(assets=[rag_answers, evaluation], resources=RESOURCES,
                       jobs=[dg.define_asset_job("evaluate", selection="evaluation"),
                             dg.define_asset_job("answer", selection="rag_answers")])
EVALUATE, ANSWER = _JOBS.resolve_job_def("evaluate"), _JOBS.resolve_job_def("answer")


def _evaluate(instance: dg.DagsterInstance, version: str, shard_size: int, config: dict | None = None,
              **resources) -> dg.ExecuteInProcessResult:
    """Score the newest RAG run; gates may fail (the fake judge's scores are not the point here)."""
    return EVALUATE.execute_in_process(partition_key=version, instance=instance, resources={**RESOURCES, **resources},
                                       raise_on_error=False, run_config={"ops": {"evaluation": {"config": {
                                           "shard_size": shard_size, **(config or {})}}}})


def _shard_outputs(result: dg.ExecuteInProcessResult) -> dict[str, dict]:
    """Mapping key -> the metadata of that judge_shard step's output."""
    return {e.step_key.split("[")[1].rstrip("]"): {k: v.value for k, v in e.event_specific_data.metadata.items()}
            for e in result.all_events if e.is_successful_output and e.step_key.startswith("evaluation.judge_shard[")}


def test_every_shard_size_gives_the_same_scores_with_one_step_per_shard(lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance:
        whole = metadata(lifecycle_run.result, "evaluation")  # one shard of every item
        items = whole["items"]
        assert plan_shards(items, 250) == plan_shards(items, items)
        # another alpha: a new evaluation from the new shards, not the same one recorded again
        result = _evaluate(instance, version, 3, {"alpha": 0.01})
        assert sorted(_shard_outputs(result)) == [s.key for s in plan_shards(items, 3)]
        assert sum(m["items"] for m in _shard_outputs(result).values()) == items
        assert len(plan_shards(items, 3)) == math.ceil(items / 3) > 1
        repo = RESOURCES["store"].evaluations()
        assert repo.item_values(metadata(result, "evaluation")["evaluation_id"]) == repo.item_values(
            whole["evaluation_id"])


def test_a_shard_whose_judge_calls_failed_reaches_the_merge_and_is_judged_again_on_the_next_run(
        lifecycle_run: LifecycleRun, monkeypatch: pytest.MonkeyPatch):
    version = lifecycle_run.version
    monkeypatch.setattr(claude_judge, "BROKEN", {"record_judge_context_precision"})
    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        offline = _judged_shard_rows()  # the offline judge's, kept
        judge = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0)
        first = _evaluate(instance, version, 5, {"severity": "WARN"}, llm=judge)
        failures = metadata(first, "evaluation")["judge_failures"]
        shards = sorted(_shard_outputs(first))
        assert failures == sum(m["judge_failures"] for m in _shard_outputs(first).values()) > 0
        clean = sum(not m["judge_failures"] for m in _shard_outputs(first).values())
        assert _judged_shard_rows() == offline + clean  # the others' outcomes were dropped once the merge read them
        again = _evaluate(instance, version, 5, {"severity": "WARN", "alpha": 0.01}, llm=judge)
        assert sorted(_shard_outputs(again)) == [k for k in shards if _shard_outputs(first)[k]["judge_failures"]]
        assert metadata(again, "evaluation")["judge_failures"] == failures
        assert _judged_shard_rows() == offline + clean


def test_an_evaluation_whose_judge_calls_failed_is_stale_and_its_next_run_sends_only_the_failed_calls(
        lifecycle_run: LifecycleRun, monkeypatch: pytest.MonkeyPatch):
    """Failed judge calls are no verdict: the evaluation holding them is not up to date (``rag-assets run`` selects
    it again), and that run judges the failed calls again, the LLM cache answering every call that succeeded,
    rather than recording the same evaluation again."""
    version = lifecycle_run.version
    selection = build_lifecycle_job(BUNDLED).selection
    monkeypatch.setattr(claude_judge, "BROKEN", {"record_judge_context_precision"})
    with lifecycle_run.instance() as instance, FakeAnthropicServer(judge_responder) as server:
        def stale() -> list[str]:
            return [key.to_user_string() for key in stale_selection(instance, defs, selection, version)]

        assert stale() == []
        judge = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0)
        first = metadata(_evaluate(instance, version, 5, {"severity": "WARN"}, llm=judge), "evaluation")
        assert first["judge_failures"] > 0
        assert stale() == ["evaluation", "judge_calibration", "judge_probes"], "judge it again, and what reads it"

        monkeypatch.setattr(claude_judge, "BROKEN", set())  # the API answers again: the same run, nothing changed
        again = _evaluate(instance, version, 5, {"severity": "WARN"}, llm=judge)
        judged = metadata(again, "evaluation")
        assert "reused_evaluation" not in judged and judged["evaluation_id"] != first["evaluation_id"]
        assert judged["judge_failures"] == 0 and judged["llm_calls"] == first["llm_calls"]
        assert judged["llm_cache_misses"] == first["judge_failures"], "only the failed calls are sent"
        assert stale() == ["judge_calibration", "judge_probes"], "the evaluation holds; what read the older one does not"


def _judged_shard_rows() -> int:
    with RESOURCES["store"].engine().connect() as conn:
        return conn.execute(select(func.count()).select_from(JudgedShardRow.__table__)).scalar()


class _Gate:
    """A judge that answers the first ``limit`` requests, then holds every later one until opened."""

    def __init__(self, limit: int) -> None:
        self.limit, self.admitted = limit, 0
        self.opened, self.holding = threading.Event(), threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict):
        with self._lock:
            admit = self.admitted < self.limit or self.opened.is_set()
            self.admitted += admit
        if not admit:
            self.holding.set()
            self.opened.wait()
        return judge_responder(body)


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _running_in_group(group: int) -> list[int]:
    """Processes of a process group that are not zombies: a killed run's children may stay zombies where
    the container's init does not reap them, and ``killpg(group, 0)`` still finds those."""
    running = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            running.append(int(stat.parent.name))
    return running


def _cached_claude_answers() -> int:
    with RESOURCES["store"].engine().connect() as conn:
        table = LLMCacheRow.__table__
        return conn.execute(select(func.count()).select_from(table).where(table.c.provider == "anthropic")).scalar()


@pytest.mark.slow
def test_a_run_killed_after_half_its_shards_judges_on_rerun_only_the_other_half(lifecycle_run: LifecycleRun,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    version = lifecycle_run.version  # the lifecycle ran on the sample with its bundled review
    # the run killed is a child process's, on this instance: DAGSTER_HOME names it, as in a deployment
    monkeypatch.setenv("DAGSTER_HOME", str(lifecycle_run.instance_dir))
    with lifecycle_run.instance() as instance:
        _kill_half_then_rerun(instance, version)


def _kill_half_then_rerun(instance: dg.DagsterInstance, version: str) -> None:
    store = RESOURCES["store"]
    chunks = store.corpus().snapshot_chunks(version)
    KNOWN_CHUNK["id"] = chunks[0].chunk_id  # the echoing system: every item's judge prompts are its own
    ANSWER.execute_in_process(partition_key=version, instance=instance, resources={
        **RESOURCES, "rag": RagSystemResource(kind="callable", target="tests.fakes.rag_systems:good")})
    run = store.rag().latest_run(version)
    responses = {r.item_id: r for r in store.rag().results(run.run_id, {c.chunk_id: c for c in chunks})}
    assert len({r.answer for r in responses.values()}) == len(responses)
    items = store.golden().version_items(run.golden_version)
    # each item's judge calls, and the one that splits its reference into statements: the golden set's were made by
    # the offline judge that built it, and an evaluation reads those of the judge that scores (here Claude)
    per_item = [len(judge_calls(i, responses[i.item_id], {c.chunk_id: c.doc_version for c in chunks},
                                i.reference_statements)) + (i.question_type != "adversarial") for i in items]
    shard_size = math.ceil(len(items) / SHARDS)
    shards = plan_shards(len(items), shard_size)
    assert len(shards) == SHARDS
    first_half = sum(sum(s.take(per_item)) for s in shards[: SHARDS // 2])
    total = sum(per_item)

    gate = _Gate(first_half)
    kept_before = _judged_shard_rows()
    with FakeAnthropicServer(gate) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.base_url}
        child = subprocess.Popen([sys.executable, "-m", "tests.defs.evaluation_in_child", version, str(shard_size)],
                                 cwd=PROJECT_ROOT, env=env, start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait(lambda: gate.holding.is_set() or child.poll() is not None, 120, "the third shard's first request")
            assert child.poll() is None, "the run ended before it reached the third shard"
            _wait(lambda: _cached_claude_answers() == first_half, 30, "the answered calls to be cached")
            # A shard keeps its outcome just after its last answer is cached: killed in between, it would be
            # judged again (from the cache) on the re-run, which is right but not what this test is about.
            _wait(lambda: _judged_shard_rows() == kept_before + SHARDS // 2, 30, "the finished shards' outcomes")
        finally:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        paid_before_kill = server.count()
        gate.opened.set()  # the held requests are answered to a dead process and counted: not part of either run
        _wait(lambda: server.in_flight == 0, 30, "the held requests to finish")
        before_rerun = server.count()

        rerun = _evaluate(instance, version, shard_size,
                          llm=LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url))
        paid_on_rerun = server.count() - before_rerun

    assert paid_before_kill == first_half and paid_on_rerun == total - first_half
    meta = metadata(rerun, "evaluation")
    assert (meta["llm_cache_hits"], meta["llm_api_requests"]) == (first_half, total - first_half)
    by_shard = _shard_outputs(rerun)  # the finished shards' outcomes were kept: they are not judged again
    assert sorted(by_shard) == [shard.key for shard in shards[SHARDS // 2:]]
    for shard in shards[SHARDS // 2:]:
        calls = sum(shard.take(per_item))
        assert (by_shard[shard.key]["llm_cache_hits"], by_shard[shard.key]["llm_api_requests"]) == (0, calls), shard.key
    _wait(lambda: not _running_in_group(child.pid), 30, "every process of the killed run to end")
