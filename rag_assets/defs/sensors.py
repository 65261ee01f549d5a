"""Sensors: the corpus sensor adds a partition per new corpus version and requests its snapshot."""

import dagster as dg

from rag_assets.corpus.manifest import fingerprint
from rag_assets.corpus.snapshot import plan_snapshot
from rag_assets.defs.assets.corpus import corpus_snapshot
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import CorpusResource, StoreResource
from rag_assets.errors import RagAssetsError


@dg.sensor(
    target=[corpus_snapshot],
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description=(
        "Watches the corpus root. A stat-only fingerprint (paths, sizes, mtimes) is the cursor; when it "
        "moves, the changed files are hashed and, if that gives a corpus version with no partition yet, "
        "the partition is added and its snapshot requested in the same tick (run key = version id)."
    ),
)
def corpus_sensor(
    context: dg.SensorEvaluationContext, corpus: CorpusResource, store: StoreResource
) -> dg.SensorResult | dg.SkipReason:
    config, root = corpus.chunker(), corpus.resolved_root()
    try:
        current = fingerprint(root, config)
        if current == context.cursor:
            return dg.SkipReason(f"corpus at {root} unchanged since the last tick")
        version = plan_snapshot(root, config, store.corpus()).version_id
    except RagAssetsError as exc:
        return dg.SkipReason(str(exc))
    if version in context.instance.get_dynamic_partitions(corpus_versions.name):
        return dg.SensorResult(skip_reason=f"corpus version {version} already has a partition", cursor=current)
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=version, run_key=version, tags={"rag_assets/trigger": "corpus_change"})],
        dynamic_partitions_requests=[corpus_versions.build_add_request([version])],
        cursor=current,
    )
