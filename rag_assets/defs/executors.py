"""The executor of every job: a process per step on this machine, or celery workers.

On one machine it is Dagster's multiprocess executor with the ``forkserver`` start method: the run
worker starts one server process that imports the code location once (``job_module_preloaded``), and
every step process is forked from it. Dagster's default (``spawn``) starts a new interpreter per step, which imports the
definitions again: about 4 s of CPU a step here, most of the cost of a daemon-launched run of small
steps (the sharded assets have many). The executor's ``max_concurrent`` and ``tag_concurrency_limits``
stay settable in a run's config.

With ``RAG_ASSETS_CELERY_BROKER`` set (``redis://...`` or ``amqp://...``), each step of a run, so each
shard of the sharded assets, becomes a celery task that any ``celery -A dagster_celery.app worker``
on that broker runs. Workers need the same project environment (store URL, ``DAGSTER_HOME`` with a
shared instance, the API key), as run workers do. The broker and backend URLs are read from the
environment when the run starts (``{"env": ...}`` config), so a password in them never lands in
Dagster's config or the UI.

Whichever executor runs them, the steps of a run launched by the daemon (a sensor, the schedule, the UI)
run while the run worker holds the store's run lock, as ``rag-assets run`` does around its
in-process runs: one lifecycle run per store at a time, however it was started (``run_locked``).
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import dagster as dg
from sqlalchemy.engine import Engine

from rag_assets.settings import CELERY_BACKEND_ENV, CELERY_BROKER_ENV, Settings
from rag_assets.store.lock import store_run_lock


@dg.configured(dg.multiprocess_executor, config_schema={
    "max_concurrent": dg.Field(dg.Noneable(int), is_required=False,
                               description="Steps of a run at once; 0 or unset: the number of CPUs."),
    "tag_concurrency_limits": dg.Field(dg.Noneable(dg.Array(dg.Permissive())), is_required=False)})
def forked_steps(config: dict[str, Any]) -> dict[str, Any]:
    """Dagster's multiprocess executor with step processes forked from a server that imported the code once
    (``spawn`` where the platform has no forkserver: Windows)."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return {**config, "start_method": {method: {}}}


def executor_for(settings: Settings, config_source: Mapping[str, Any] | None = None) -> dg.ExecutorDefinition | None:
    """The celery executor when ``settings`` name a broker, else None (``build_definitions`` then uses
    ``forked_steps``, as it does for every named instance).

    ``config_source`` is celery settings both the executor and the workers use (e.g. a
    ``global_keyprefix`` that keeps several deployments apart on one Redis). Without
    ``RAG_ASSETS_CELERY_BACKEND``, results go to a Redis broker itself, or back over AMQP (``rpc://``).
    """
    broker = settings.celery_broker
    if not broker:
        return None
    from dagster_celery import celery_executor

    backend = {"env": CELERY_BACKEND_ENV} if settings.celery_backend else (
        {"env": CELERY_BROKER_ENV} if broker.startswith(("redis://", "rediss://")) else "rpc://")
    return celery_executor.configured({"broker": {"env": CELERY_BROKER_ENV}, "backend": backend,
                                       "config_source": dict(config_source or {})})


#: The store whose run lock each job's runs hold, by job name; ``build_definitions`` records every job it builds
#: (one executor serves every instance of a code location, so the store is looked up by the run's job).
_JOB_STORES: dict[str, Callable[[], Engine]] = {}


def lock_runs_of(job_names: Iterable[str], engine: Callable[[], Engine]) -> None:
    """Runs of these jobs hold the run lock of the store ``engine`` returns (called in the run worker)."""
    _JOB_STORES.update(dict.fromkeys(job_names, engine))


class _RunLocked(dg.Executor):
    """``inner``'s execution of a run's steps, inside the run lock of the job's store (held by the run worker)."""

    def __init__(self, inner: dg.Executor) -> None:
        self.inner = inner

    @property
    def retries(self):
        return self.inner.retries

    @property
    def step_dependency_config(self):
        return self.inner.step_dependency_config

    def execute(self, plan_context, execution_plan) -> Iterator[dg.DagsterEvent]:
        engine = _JOB_STORES.get(plan_context.job_name)
        if engine is None:  # a job of no lifecycle instance (a test's, a user's own)
            yield from self.inner.execute(plan_context, execution_plan)
            return
        with store_run_lock(engine(), plan_context.log.info):
            yield from self.inner.execute(plan_context, execution_plan)


def job_module_preloaded(init_context: dg.InitExecutorContext) -> dg.InitExecutorContext:
    """``init_context`` whose forkserver (if its executor forks steps from one) imports the job's module before it
    forks, unless the run's config names the modules to preload.

    Dagster means to preload the module of a job loaded from one, but its executor reads a missing
    ``preload_modules`` as an empty list, so the forkserver imported Dagster alone and every step process imported
    the code location again: about 2.3 s of CPU a step (measured on dagster 1.13), which a run of the sharded
    assets pays dozens of times."""
    start = init_context.executor_config.get("start_method")
    forkserver = start.get("forkserver") if isinstance(start, Mapping) else None
    module = getattr(init_context.job, "get_module", lambda: None)()
    if forkserver is None or forkserver.get("preload_modules") or not module:
        return init_context
    config = {**init_context.executor_config, "start_method": {"forkserver": {**forkserver, "preload_modules": [module]}}}
    return init_context._replace(executor_config=config)


@functools.cache
def run_locked(executor: dg.ExecutorDefinition) -> dg.ExecutorDefinition:
    """``executor`` with the same name, config and requirements, whose runs of a lifecycle job hold its store's
    run lock (see ``lock_runs_of``) and whose forkserver preloads the job's module (``job_module_preloaded``); one
    object per executor, so the instances of a code location share it."""
    return dg.ExecutorDefinition(
        name=executor.name, config_schema=executor.config_schema, requirements=executor.get_requirements,
        executor_creation_fn=lambda init_context: _RunLocked(
            executor.executor_creation_fn(job_module_preloaded(init_context))),
        description=executor.description)
