"""Schedules: re-evaluate the newest golden set regularly, since a RAG system drifts without any corpus change."""

import dagster as dg

from rag_assets.defs.partitions import corpus_versions
from rag_assets.settings import Settings

reevaluation_job = dg.define_asset_job(
    name="reevaluate",
    selection=dg.AssetSelection.assets("rag_answers", "evaluation"),
    description="Run the RAG system over the newest golden set again and score it, nothing upstream.",
)


@dg.schedule(
    job=reevaluation_job,
    cron_schedule=Settings.evaluation_cron(),
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-answers and re-scores the newest golden set on the newest corpus partition "
                "(cron from RAG_ASSETS_EVALUATION_CRON, daily at 06:00 UTC by default), even when nothing changed.",
)
def reevaluation_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    partitions = context.instance.get_dynamic_partitions(corpus_versions.name)
    if not partitions:
        return dg.SkipReason("no corpus version yet")
    newest = partitions[-1]
    tick = context.scheduled_execution_time.isoformat()
    return dg.RunRequest(run_key=f"reevaluate:{newest}:{tick}", partition_key=newest,
                         tags={"rag_assets/trigger": "schedule"})
