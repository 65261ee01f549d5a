"""The documented production instance (deploy/dagster.yaml) on the machine's PostgreSQL.

Two databases per test, created and dropped here: one for Dagster's instance (dagster-postgres),
one for the project's store (RAG_ASSETS_DATABASE_URL). The instance is built from the file a user
copies to $DAGSTER_HOME, with only its environment variables pointing at the test's databases.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import psycopg2
import pytest
from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

from rag_assets.definitions import defs
from rag_assets.defs.resources import LLM_POOL
from rag_assets.store.engine import get_engine
from tests.conftest import PG_HOST, PG_PORT, PG_USER, PROJECT_ROOT, postgres_database, postgres_url
from tests.defs.lifecycle import check_evaluations, current_version, metadata, run_job, stage_sample_review

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DEPLOY_DAGSTER_YAML = PROJECT_ROOT / "deploy" / "dagster.yaml"
LLM_OPS = {op.name for op in defs.resolve_job_def("lifecycle").graph.iterate_op_defs() if op.pool == LLM_POOL}
WAIT_SECONDS = 240


@dataclass(frozen=True)
class Deployment:
    dagster_home: Path
    dagster_db: str
    store_db: str

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.dagster_home))

    def query(self, database: str, sql: str, *params: object) -> list[tuple]:
        with psycopg2.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=database) as connection:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()


@pytest.fixture
def deployment(project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployment]:
    """$DAGSTER_HOME with deploy/dagster.yaml as shipped, and the environment it reads."""
    with postgres_database("rag_assets_dagster") as dagster_db, postgres_database("rag_assets_store") as store_db:
        home = tmp_path / "dagster_home"
        home.mkdir()
        shutil.copyfile(DEPLOY_DAGSTER_YAML, home / "dagster.yaml")
        for name, value in {"DAGSTER_HOME": str(home), "DAGSTER_PG_HOST": PG_HOST, "DAGSTER_PG_PORT": str(PG_PORT),
                            "DAGSTER_PG_USER": PG_USER, "DAGSTER_PG_PASSWORD": "", "DAGSTER_PG_DB": dagster_db,
                            "RAG_ASSETS_DATABASE_URL": postgres_url(store_db)}.items():
            monkeypatch.setenv(name, value)
        try:
            yield Deployment(home, dagster_db, store_db)
        finally:
            get_engine(postgres_url(store_db)).dispose()


def test_the_lifecycle_keeps_dagster_state_and_project_rows_in_postgresql(deployment: Deployment, project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with deployment.instance() as instance:
        result = run_job(instance, "lifecycle", version)
    golden, checks = metadata(result, "golden_set"), check_evaluations(result)
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    lifecycle_assets = defs.resolve_job_def("lifecycle").asset_layer.executable_asset_keys
    assert materialized == {key.to_user_string() for key in lifecycle_assets}
    assert len(checks) >= 8 and all(check.passed for check in checks.values())

    with deployment.instance() as instance:  # a fresh instance: everything was written to PostgreSQL
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
        assert instance.get_run_by_id(result.run_id).status == dg.DagsterRunStatus.SUCCESS
        assert instance.get_dynamic_partitions("corpus_versions") == [version]
        partitioned = {key.to_user_string() for key in lifecycle_assets
                       if defs.resolve_assets_def(key).partitions_def is not None}
        assert materialized - partitioned == {"judge_calibration"}, "the one unpartitioned asset: its check is the judge's"
        for asset in materialized:
            event = instance.get_latest_materialization_event(dg.AssetKey(asset))
            assert event is not None and event.run_id == result.run_id
            assert event.asset_materialization.partition == (version if asset in partitioned else None), asset
        for check in checks.values():
            record = instance.event_log_storage.get_latest_asset_check_execution_by_key([check.asset_check_key])
            assert record[check.asset_check_key].status.value == "SUCCEEDED"

    sql = deployment.query
    assert sql(deployment.dagster_db, "SELECT status FROM runs WHERE run_id = %s", result.run_id) == [("SUCCESS",)]
    assert sql(deployment.dagster_db, "SELECT count(*) FROM event_logs WHERE run_id = %s AND dagster_event_type = "
               "'ASSET_MATERIALIZATION'", result.run_id) == [(len(materialized),)]
    assert sql(deployment.dagster_db, "SELECT count(*) FROM asset_check_executions WHERE run_id = %s "
               "AND execution_status = 'SUCCEEDED'", result.run_id) == [(len(checks),)]
    assert sql(deployment.store_db, "SELECT count(*) FROM golden_version_item") == [(golden["items"],)]
    assert sql(deployment.store_db, "SELECT count(*) FROM rag_result")[0][0] >= golden["items"]
    assert sql(deployment.store_db, "SELECT count(*) FROM evaluation WHERE corpus_version = %s", version) == [(1,)]
    assert not (project_env / "rag_assets.db").exists(), "no SQLite store next to the PostgreSQL one"


def _wait(condition: Callable[[], bool], process: subprocess.Popen, log: Path, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"gave up waiting until {what} (exit {process.poll()}):\n{log.read_text()[-3000:]}")
        time.sleep(0.5)


def _op(step_key: str) -> str:
    """``rag_answers.answer_shard[s0]`` -> ``answer_shard``: the op a (sharded, graph-backed) step runs."""
    return step_key.rsplit(".", 1)[-1].split("[", 1)[0]


def _llm_steps(step_keys) -> set[str]:
    return {key for key in step_keys if _op(key) in LLM_OPS}


def _step_events(instance: dg.DagsterInstance, run_id: str, event_type: dg.DagsterEventType) -> dict[str, float]:
    """Step key -> timestamp of its event of this type in the run."""
    records = instance.get_records_for_run(run_id, of_type=event_type).records
    return {r.event_log_entry.step_key: r.event_log_entry.timestamp for r in records}


def test_llm_steps_of_a_run_in_another_process_wait_for_the_anthropic_pool(deployment: Deployment, tmp_path: Path):
    """Pool limit 1, its slot held by this process: `rag-assets run` (its own process, the same
    instance) snapshots the corpus but its first LLM step waits until the slot is freed."""
    version = current_version()
    stage_sample_review(version)
    holder = (str(uuid.uuid4()), "holder_step")
    log = tmp_path / "rag-assets-run.log"
    with deployment.instance() as instance, log.open("w") as output:
        storage = instance.event_log_storage
        storage.set_concurrency_slots(LLM_POOL, 1)
        assert storage.claim_concurrency_slot(LLM_POOL, *holder).is_claimed
        process = subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "run", "--no-review"], env=dict(os.environ),
                                   stdout=output, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            _wait(lambda: storage.get_concurrency_info(LLM_POOL).pending_step_count >= 1, process, log,
                  "the first LLM steps of the run wait for the pool")
            (run_id,) = storage.get_concurrency_info(LLM_POOL).pending_run_ids
            time.sleep(2)  # would the step go ahead anyway?
            done = _step_events(instance, run_id, dg.DagsterEventType.STEP_SUCCESS)
            assert "corpus_snapshot" in done, "steps outside the pool do not wait"
            assert not _llm_steps(_step_events(instance, run_id, dg.DagsterEventType.STEP_START))
            released = time.time()
            storage.free_concurrency_slot_for_step(holder[0], holder[1])
            assert process.wait(timeout=WAIT_SECONDS) == 0, log.read_text()[-3000:]
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        started = _step_events(instance, run_id, dg.DagsterEventType.STEP_START)
        llm_steps = _llm_steps(started)
        assert {_op(step) for step in llm_steps} == LLM_OPS and min(started[step] for step in llm_steps) >= released
        ends = _step_events(instance, run_id, dg.DagsterEventType.STEP_SUCCESS)
        spans = sorted((started[step], ends[step]) for step in llm_steps)
        assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:])), "one LLM step at a time"
        info = storage.get_concurrency_info(LLM_POOL)
        assert (info.slot_count, info.active_slot_count, info.pending_step_count) == (1, 0, 0)
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.SUCCESS
