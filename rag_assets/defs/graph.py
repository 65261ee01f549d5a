"""The whole graph of one instance as one Definitions: the one code path of the bundled code location and
of every ``RagEvaluation`` component.

Each entry of a tuple below builds one definition for an instance; adding an asset, a check or a
sensor is adding its builder here.
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from rag_assets.defs.assets.ab import build_ab_comparison
from rag_assets.defs.assets.calibration import build_judge_agreement, build_judge_calibration, build_judge_calibration_job
from rag_assets.defs.assets.corpus import build_corpus_snapshot
from rag_assets.defs.assets.curation import build_curated_decisions, build_curation_queue
from rag_assets.defs.assets.evaluation import build_evaluation
from rag_assets.defs.assets.generation import build_question_candidates
from rag_assets.defs.assets.golden import build_golden_set
from rag_assets.defs.assets.probes import build_judge_probes
from rag_assets.defs.assets.production import build_production_sample
from rag_assets.defs.assets.rag import build_rag_answers
from rag_assets.defs.checks import (build_golden_set_pinned, build_golden_set_quality, build_golden_set_statements,
                                    build_rag_answers_error_budget, build_rag_answers_pinned)
from rag_assets.defs.executors import forked_steps, lock_runs_of, run_locked
from rag_assets.defs.jobs import build_curation_import_job, build_lifecycle_job, build_production_job
from rag_assets.defs.lifecycle import Lifecycle
from rag_assets.defs.schedules import build_reevaluation_job, build_reevaluation_schedule
from rag_assets.defs.sensors import (build_automation_sensor, build_corpus_sensor, build_curation_inbox_sensor,
                                     build_production_logs_sensor, build_run_failure_alerts)

ASSETS = (build_corpus_snapshot, build_question_candidates, build_curation_queue, build_curated_decisions,
          build_golden_set, build_rag_answers, build_evaluation, build_judge_probes, build_ab_comparison,
          build_production_sample, build_judge_calibration)
CHECKS = (build_golden_set_quality, build_golden_set_pinned, build_golden_set_statements, build_rag_answers_pinned,
          build_rag_answers_error_budget, build_judge_agreement)
JOBS = (build_lifecycle_job, build_curation_import_job, build_reevaluation_job, build_production_job,
        build_judge_calibration_job)
SENSORS = (build_corpus_sensor, build_curation_inbox_sensor, build_production_logs_sensor, build_automation_sensor,
           build_run_failure_alerts)
SCHEDULES = (build_reevaluation_schedule,)

#: The resource keys every instance binds (each under ``Lifecycle.named(key)``).
RESOURCE_KEYS = ("store", "corpus", "llm", "curation", "golden_policy", "rag", "production_logs")


def build_definitions(lifecycle: Lifecycle, resources: Mapping[str, dg.ConfigurableResource],
                      executor: dg.ExecutorDefinition | None = None) -> dg.Definitions:
    """Every asset, check, job, sensor and schedule of ``lifecycle``, with ``resources`` (by their bare keys)
    bound under the instance's own keys."""
    missing = set(RESOURCE_KEYS) - set(resources)
    if missing:
        raise ValueError(f"resources missing for instance {lifecycle.name or '(bundled)'}: {', '.join(sorted(missing))}")
    jobs = [build(lifecycle) for build in JOBS]
    lock_runs_of([job.name for job in jobs], resources["store"].engine)
    return dg.Definitions(
        assets=[build(lifecycle) for build in ASSETS],
        asset_checks=[build(lifecycle) for build in CHECKS],
        jobs=jobs,
        sensors=[build(lifecycle) for build in SENSORS],
        schedules=[build(lifecycle) for build in SCHEDULES],
        resources={lifecycle.named(key): resource for key, resource in resources.items()},
        executor=run_locked(executor or forked_steps),
    )
