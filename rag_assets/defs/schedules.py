"""Schedules: re-evaluate the newest golden set of the current corpus regularly, since a RAG system drifts without
any corpus change."""

import functools

import dagster as dg

from rag_assets.corpus.snapshot import held_version
from rag_assets.defs.jobs import AssetJob
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle


@functools.cache
def build_reevaluation_job(lifecycle: Lifecycle) -> AssetJob:
    return dg.define_asset_job(
        name=lifecycle.named("reevaluate"),
        selection=lifecycle.assets("rag_answers", "evaluation", "judge_probes", "judge_calibration"),
        description="Run the RAG system over the newest golden set again, score it, probe the judge and check its "
                    "agreement with the experts, nothing upstream.",
    )


@functools.cache
def build_reevaluation_schedule(lifecycle: Lifecycle) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=lifecycle.named("reevaluation_schedule"),
        job=build_reevaluation_job(lifecycle),
        cron_schedule=lifecycle.evaluation_cron,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        required_resource_keys=lifecycle.resource_keys("corpus", "store"),
        description="Re-answers and re-scores the newest golden set of the corpus version the folder held at its "
                    "last snapshot (the newest partition when none is known; cron from RAG_ASSETS_EVALUATION_CRON or "
                    "the instance's evaluation_cron, daily at 06:00 UTC by default), even when nothing changed.",
    )
    def reevaluation_schedule(context: dg.ScheduleEvaluationContext, **_called: object
                              ) -> dg.RunRequest | dg.SkipReason:
        partitions = context.instance.get_dynamic_partitions(lifecycle.corpus_versions.name)
        if not partitions:
            return dg.SkipReason("no corpus version yet")
        services = lifecycle.services(context)
        held = held_version(services.corpus.resolved_root(), services.store.corpus())  # None: the folder is gone
        version = held if held in partitions else partitions[-1]
        tick = context.scheduled_execution_time.isoformat()
        return dg.RunRequest(run_key=f"reevaluate:{version}:{tick}", partition_key=version,
                             tags={"rag_assets/trigger": "schedule"})

    return reevaluation_schedule


reevaluation_job = build_reevaluation_job(BUNDLED)
reevaluation_schedule = build_reevaluation_schedule(BUNDLED)
