"""Schedules: re-evaluate the newest golden set regularly, since a RAG system drifts without any corpus change."""

import functools

import dagster as dg

from rag_assets.defs.jobs import AssetJob
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle


@functools.cache
def build_reevaluation_job(lifecycle: Lifecycle) -> AssetJob:
    return dg.define_asset_job(
        name=lifecycle.named("reevaluate"),
        selection=lifecycle.assets("rag_answers", "evaluation", "judge_probes"),
        description="Run the RAG system over the newest golden set again, score it and probe the judge, nothing "
                    "upstream.",
    )


@functools.cache
def build_reevaluation_schedule(lifecycle: Lifecycle) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=lifecycle.named("reevaluation_schedule"),
        job=build_reevaluation_job(lifecycle),
        cron_schedule=lifecycle.evaluation_cron,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description="Re-answers and re-scores the newest golden set on the newest corpus partition "
                    "(cron from RAG_ASSETS_EVALUATION_CRON or the instance's evaluation_cron, daily at 06:00 UTC by "
                    "default), even when nothing changed.",
    )
    def reevaluation_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        partitions = context.instance.get_dynamic_partitions(lifecycle.corpus_versions.name)
        if not partitions:
            return dg.SkipReason("no corpus version yet")
        newest = partitions[-1]
        tick = context.scheduled_execution_time.isoformat()
        return dg.RunRequest(run_key=f"reevaluate:{newest}:{tick}", partition_key=newest,
                             tags={"rag_assets/trigger": "schedule"})

    return reevaluation_schedule


reevaluation_job = build_reevaluation_job(BUNDLED)
reevaluation_schedule = build_reevaluation_schedule(BUNDLED)
