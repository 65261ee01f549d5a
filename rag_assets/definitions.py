"""The one Definitions object (workspace.yaml and ``dagster dev`` load ``defs`` from here).

Modules of ``rag_assets.defs`` are listed explicitly rather than discovered with
``load_from_defs_folder``: that needs the project's pyproject.toml beside the package, which an
installed (non-editable) copy does not have.
"""

import dagster as dg

from rag_assets.defs.assets.ab import ab_comparison
from rag_assets.defs.assets.calibration import judge_agreement, judge_calibration, judge_calibration_job
from rag_assets.defs.assets.corpus import corpus_snapshot
from rag_assets.defs.assets.curation import curated_decisions, curation_queue
from rag_assets.defs.assets.generation import question_candidates
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.golden import golden_set
from rag_assets.defs.assets.production import production_sample
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.checks import golden_set_pinned, golden_set_quality, rag_answers_error_budget, rag_answers_pinned
from rag_assets.defs.executors import executor_from_env
from rag_assets.defs.jobs import curation_import_job, lifecycle_job, production_job
from rag_assets.defs.resources import RESOURCES
from rag_assets.defs.schedules import reevaluation_job, reevaluation_schedule
from rag_assets.defs.sensors import (automation_sensor, corpus_sensor, curation_inbox_sensor, production_logs_sensor,
                                     run_failure_alerts)

defs = dg.Definitions(
    assets=[corpus_snapshot, question_candidates, curation_queue, curated_decisions, golden_set, rag_answers,
            evaluation, ab_comparison, production_sample, judge_calibration],
    asset_checks=[golden_set_quality, golden_set_pinned, rag_answers_pinned, rag_answers_error_budget, judge_agreement],
    jobs=[lifecycle_job, curation_import_job, reevaluation_job, production_job, judge_calibration_job],
    sensors=[corpus_sensor, curation_inbox_sensor, production_logs_sensor, automation_sensor, run_failure_alerts],
    schedules=[reevaluation_schedule],
    resources=RESOURCES,
    executor=executor_from_env(),
)
