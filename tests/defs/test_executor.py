"""Every job's executor forks its step processes from one server per run (Dagster's ``forkserver`` start
method) rather than starting a new interpreter per step, and stays settable in run config."""

from __future__ import annotations

import os
import threading
import time

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.executors import forked_steps
from rag_assets.defs.resources import RESOURCES
from tests.defs import forked_job
from tests.store.processes import finish, go, launch, read_line
from tests.store.test_store_lock import HOLD


def test_the_steps_of_a_run_are_processes_forked_from_one_server_not_children_of_the_run():
    with dg.instance_for_test() as instance:
        with dg.execute_job(dg.reconstructable(forked_job.two_steps), instance=instance,
                            run_config={"execution": {"config": {"max_concurrent": 2}}}) as result:
            assert result.success
            (pid1, parent1), (pid2, parent2) = result.output_for_node("first"), result.output_for_node("second")
    assert pid1 != pid2 and os.getpid() not in (pid1, pid2), "each step in a process of its own"
    assert parent1 == parent2 != os.getpid(), "forked by the forkserver; spawned steps are children of the run"


def test_every_job_of_the_bundled_instance_runs_on_it():
    executors = {job.executor_def for job in defs.get_repository_def().get_all_jobs()}
    assert len(executors) == 1 and executors.pop().config_schema is forked_steps.config_schema


def test_a_run_the_daemon_launches_waits_for_the_store_run_lock(project_env, tmp_path, monkeypatch):
    """Runs of the bundled jobs outside the CLI (sensors, schedule, UI) take the lock ``rag-assets run`` takes."""
    monkeypatch.setenv("RAG_ASSETS_PRODUCTION_LOGS", str(tmp_path / "no-logs"))
    holder = launch(HOLD, RESOURCES["store"].settings().store_url)
    read_line(holder, "READY")
    go(holder)
    read_line(holder, "GOT")
    with dg.instance_for_test() as instance:
        outcome: list[bool] = []

        def launch_run() -> None:
            with dg.execute_job(dg.reconstructable(forked_job.production), instance=instance,
                                tags={"dagster/partition": "2026-01-02"}) as result:
                outcome.append(result.success)

        run = threading.Thread(target=launch_run)
        run.start()
        deadline = time.monotonic() + 300  # a bound for a broken test, not an expected duration
        while not _events(instance, "another rag-assets run is using the store") and run.is_alive():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert run.is_alive(), "the run went on while another process held the store's run lock"
        assert not _events(instance, "STEP_START"), "no step started before the lock was free"
        go(holder)
        read_line(holder, "DONE")
        run.join(timeout=300)
        assert len(outcome) == 1 and _events(instance, "STEP_START"), "the run went on once the lock was free"
    finish(holder)


def _events(instance: dg.DagsterInstance, text: str) -> list[str]:
    """The messages and event types of every run's events that contain ``text``."""
    return [line for run in instance.get_runs() for event in instance.all_logs(run.run_id)
            if text in (line := f"{event.dagster_event_type} {event.user_message}")]
