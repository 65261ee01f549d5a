"""The evaluation as a job on the celery executor, defined where a worker can rebuild it by module and name."""

from __future__ import annotations

import os

import dagster as dg

from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.executors import executor_for
from rag_assets.defs.resources import RESOURCES
from rag_assets.settings import current_settings

KEY_PREFIX_ENV = "RAG_ASSETS_TEST_CELERY_KEY_PREFIX"


def isolation(prefix: str) -> dict:
    """Celery settings that keep one test's queue and results apart from other sessions on the same Redis."""
    return {"broker_transport_options": {"global_keyprefix": prefix},
            "result_backend_transport_options": {"global_keyprefix": prefix}}


def evaluation_on_celery() -> dg.JobDefinition:
    job = dg.define_asset_job("evaluate_on_celery", selection=dg.AssetSelection.assets("evaluation"))
    return dg.Definitions(assets=[rag_answers, evaluation], jobs=[job], resources=RESOURCES,
                          executor=executor_for(current_settings(), isolation(os.environ[KEY_PREFIX_ENV]))
                          ).resolve_job_def("evaluate_on_celery")
