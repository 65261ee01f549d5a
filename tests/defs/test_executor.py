"""Every job's executor forks its step processes from one server per run (Dagster's ``forkserver`` start
method) rather than starting a new interpreter per step, and stays settable in run config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.executors import forked_steps
from rag_assets.defs.resources import RESOURCES
from tests.conftest import PROJECT_ROOT
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


# A run worker's steps, in a process of its own as a run worker is: a process starts one forkserver, which keeps the
# environment and preloaded modules of its start (this process's may have started already).
RUN_WORKER = """
import json, dagster as dg
from tests.conftest import PROJECT_ROOT
from tests.defs import forked_job
with dg.instance_for_test() as instance:
    with dg.execute_job(dg.reconstructable(forked_job.two_steps_as_bundled), instance=instance,
                        run_config={"execution": {"config": {"max_concurrent": 2}}}) as result:
        assert result.success
        print(json.dumps([result.output_for_node("first"), result.output_for_node("second")]))
"""


def test_the_server_the_steps_are_forked_from_imported_the_jobs_module_so_no_step_imports_it_again(tmp_path):
    """Dagster's executor read an unset ``preload_modules`` as none, so each step process imported the code location
    again (about 2.3 s of CPU a step); the bundled executor names the job's module."""
    imports = tmp_path / "imports.txt"
    done = subprocess.run([sys.executable, "-c", RUN_WORKER], capture_output=True, text=True, timeout=300, check=True,
                          env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), forked_job.IMPORTS_ENV: str(imports)})
    (pid1, parent1), (pid2, parent2) = json.loads(done.stdout.strip().splitlines()[-1])
    assert parent1 == parent2 and pid1 != pid2
    lines = imports.read_text().split()
    assert str(parent1) in lines, "the server the steps were forked from imported the job's module"
    assert {str(pid1), str(pid2)}.isdisjoint(lines), "no step imported it again"


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
