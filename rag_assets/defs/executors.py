"""The executor of every job: Dagster's default (a process per step on this machine), or celery workers.

With ``RAG_ASSETS_CELERY_BROKER`` set (``redis://...`` or ``amqp://...``), each step of a run, so each
shard of the sharded assets, becomes a celery task that any ``celery -A dagster_celery.app worker``
on that broker runs. Workers need the same project environment (store URL, ``DAGSTER_HOME`` with a
shared instance, the API key), as run workers do. The broker and backend URLs are read from the
environment when the run starts (``{"env": ...}`` config), so a password in them never lands in
Dagster's config or the UI.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import dagster as dg

from rag_assets.settings import CELERY_BACKEND_ENV, CELERY_BROKER_ENV


def executor_from_env(config_source: Mapping[str, Any] | None = None) -> dg.ExecutorDefinition | None:
    """The celery executor when a broker is configured, else None (Dagster's default).

    ``config_source`` is celery settings both the executor and the workers use (e.g. a
    ``global_keyprefix`` that keeps several deployments apart on one Redis). Without
    ``RAG_ASSETS_CELERY_BACKEND``, results go to a Redis broker itself, or back over AMQP (``rpc://``).
    """
    broker = os.environ.get(CELERY_BROKER_ENV)
    if not broker:
        return None
    from dagster_celery import celery_executor

    backend = {"env": CELERY_BACKEND_ENV} if os.environ.get(CELERY_BACKEND_ENV) else (
        {"env": CELERY_BROKER_ENV} if broker.startswith(("redis://", "rediss://")) else "rpc://")
    return celery_executor.configured({"broker": {"env": CELERY_BROKER_ENV}, "backend": backend,
                                       "config_source": dict(config_source or {})})
