"""question_candidates through Dagster: offline by default, Claude (the fake server) with a key."""

from __future__ import annotations

import logging
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.corpus.snapshot import plan_snapshot
from rag_assets.defs.assets.corpus import corpus_snapshot
from rag_assets.defs.assets.generation import question_candidates
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import API_KEY_ENV, RESOURCES, LLMResource
from tests.fakes.claude_generation import API_KEY


def _version() -> str:
    corpus, store = RESOURCES["corpus"], RESOURCES["store"]
    return plan_snapshot(corpus.resolved_root(), corpus.chunker(), store.corpus()).version_id


# Resolved once, at import: a Definitions built inside a test can meet a Dagster defs-state storage
# left behind by an earlier instance in the same worker process.
GENERATE = dg.Definitions(assets=[corpus_snapshot, question_candidates], resources=RESOURCES,
                          jobs=[dg.define_asset_job("generate", selection=[corpus_snapshot, question_candidates])]
                          ).resolve_job_def("generate")


def _materialize(instance, version: str, llm: LLMResource, max_tasks: int = 60, shard_size: int = 20):
    return GENERATE.execute_in_process(
        partition_key=version, instance=instance, resources={**RESOURCES, "llm": llm},
        run_config={"ops": {"question_candidates": {"config": {"max_tasks": max_tasks, "shard_size": shard_size}}}},
    )


def _metadata(instance) -> dict:
    event = instance.get_latest_materialization_event(question_candidates.key)
    return {k: v.value for k, v in event.asset_materialization.metadata.items()}


def test_offline_generation_materializes_with_every_type_and_says_it_is_offline(project_env: Path):
    version = _version()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [version])
        assert _materialize(instance, version, LLMResource()).success
        meta = _metadata(instance)
    assert meta["llm"] == "offline (deterministic heuristics, not a model's judgment)"
    assert all(meta[f"candidates_{t}"] > 0 for t in
               ("factual", "multi_hop", "abstractive", "comparative", "adversarial", "terminology"))
    assert meta["candidates"] == meta["new_candidates"] > 40


def test_generation_in_many_shards_makes_the_candidates_of_one_shard(project_env: Path):
    version = _version()
    candidate_ids = []
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [version])
        for shard_size in (7, 60):
            result = _materialize(instance, version, LLMResource(), shard_size=shard_size)
            shards = {e.step_key for e in result.all_events
                      if e.is_step_success and e.step_key.startswith("question_candidates.generate_shard[")}
            assert len(shards) == -(-60 // shard_size)
            event = instance.get_latest_materialization_event(question_candidates.key).asset_materialization
            candidate_ids.append(event.tags["dagster/data_version"])  # a hash of the stored candidate ids
            meta = _metadata(instance)
    assert candidate_ids[0] == candidate_ids[1]
    assert meta["tasks"] == 60 and meta["new_candidates"] == 0 and meta["candidates"] > 40


def test_with_a_key_claude_is_used_through_the_sdk_and_the_key_never_leaks(
        project_env: Path, fake_claude, monkeypatch: pytest.MonkeyPatch, caplog, capsys):
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    caplog.set_level(logging.DEBUG)
    llm = LLMResource(api_key=dg.EnvVar(API_KEY_ENV), base_url=fake_claude.base_url)
    version = _version()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [version])
        assert _materialize(instance, version, llm, max_tasks=10).success
        first = _metadata(instance)
        calls = fake_claude.count()
        assert _materialize(instance, version, llm, max_tasks=10).success
        second = _metadata(instance)
        stored_events = [str(e) for e in instance.all_logs(instance.get_runs()[0].run_id)]
        instance_root = Path(instance.root_directory)
        leaked_files = [p for root in (project_env, instance_root) for p in root.rglob("*")
                        if p.is_file() and API_KEY.encode() in p.read_bytes()]
    assert first["llm"] == "anthropic / claude-sonnet-5-5"
    assert first["llm_api_requests"] == calls == 10 and first["new_candidates"] == 10
    assert second["llm_cache_hits"] == 10 and second["llm_api_requests"] == 0 and second["new_candidates"] == 0
    assert fake_claude.count() == calls, "the second materialization made zero calls"
    assert all(r.had_api_key for r in fake_claude.requests)
    assert leaked_files == []
    everything_said = caplog.text + capsys.readouterr().out + str(first) + str(second) + "".join(stored_events)
    assert API_KEY not in everything_said
    assert API_KEY not in repr(llm.client())


def test_the_batch_option_sends_the_calls_as_one_message_batch_and_says_so(
        project_env: Path, fake_claude, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    llm = LLMResource(api_key=dg.EnvVar(API_KEY_ENV), base_url=fake_claude.base_url, batch=True, batch_min_calls=5,
                      batch_poll_seconds=0.01)
    version = _version()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [version])
        assert _materialize(instance, version, llm, max_tasks=10).success
        meta = _metadata(instance)
        leaked_files = [p for p in project_env.rglob("*") if p.is_file() and API_KEY.encode() in p.read_bytes()]
    assert [len(b.requests) for b in fake_claude.batches] == [10] and fake_claude.count() == 0
    assert meta["llm"] == "anthropic / claude-sonnet-5-5 (10 calls via Message Batches)"
    assert (meta["llm_via_batch"], meta["llm_batch_fallbacks"], meta["new_candidates"]) == (10, 0, 10)
    assert meta["llm_cost_usd"] == pytest.approx(10 * (1000 * 2 + 100 * 10) / 1e6 / 2)
    assert leaked_files == []
