"""Every job's executor forks its step processes from one server per run (Dagster's ``forkserver`` start
method) rather than starting a new interpreter per step, and stays settable in run config."""

from __future__ import annotations

import os

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.executors import forked_steps
from tests.defs import forked_job


def test_the_steps_of_a_run_are_processes_forked_from_one_server_not_children_of_the_run():
    with dg.instance_for_test() as instance:
        with dg.execute_job(dg.reconstructable(forked_job.two_steps), instance=instance,
                            run_config={"execution": {"config": {"max_concurrent": 2}}}) as result:
            assert result.success
            (pid1, parent1), (pid2, parent2) = result.output_for_node("first"), result.output_for_node("second")
    assert pid1 != pid2 and os.getpid() not in (pid1, pid2), "each step in a process of its own"
    assert parent1 == parent2 != os.getpid(), "forked by the forkserver; spawned steps are children of the run"


def test_every_job_of_the_bundled_instance_runs_on_it():
    assert {job.executor_def for job in defs.get_repository_def().get_all_jobs()} == {forked_steps}
