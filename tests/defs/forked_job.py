"""A job of two independent steps on the project's executor, each reporting the process it ran in."""

from __future__ import annotations

import os

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.executors import forked_steps


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



def production() -> dg.JobDefinition:
    """The bundled production job, as the daemon runs it (on the bundled executor)."""
    return defs.resolve_job_def("production")
