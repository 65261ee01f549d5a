"""A job of two independent steps on the project's executor, each reporting the process it ran in.

With ``IMPORTS_ENV`` naming a file, every process that imports this module adds its pid to it: a step process forked
from a server that preloaded the job's module adds none."""

from __future__ import annotations

import os

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.executors import forked_steps, run_locked

IMPORTS_ENV = "FORKED_JOB_IMPORTS"
if os.environ.get(IMPORTS_ENV):
    with open(os.environ[IMPORTS_ENV], "a", encoding="utf-8") as imports:
        imports.write(f"{os.getpid()}\n")


@dg.op
def first() -> tuple[int, int]:
    return os.getpid(), os.getppid()


@dg.op
def second() -> tuple[int, int]:
    return os.getpid(), os.getppid()


@dg.job(executor_def=forked_steps)
def two_steps() -> None:
    first()
    second()


@dg.job(executor_def=run_locked(forked_steps))
def two_steps_as_bundled() -> None:
    """The same steps on the executor every bundled job has."""
    first()
    second()


def production() -> dg.JobDefinition:
    """The bundled production job, as the daemon runs it (on the bundled executor)."""
    return defs.resolve_job_def("production")
