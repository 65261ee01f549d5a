"""Dagster plumbing shared by the sharded assets (question_candidates, rag_answers, evaluation).

Each is a graph-backed asset: a plan step, one dynamically mapped step per shard, and a merge step
that writes the store and yields the materialization (and checks). The asset keeps its name,
partitions, checks and metadata; its run config keeps the one-level shape
``ops: {<asset>: {config: {...}}}`` through a config mapping that hands it to every step.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg

from rag_assets.defs.partitions import corpus_versions
from rag_assets.shards import Shard, plan_shards

SHARD_SIZE_HELP = ("work items (golden items, generation tasks) per shard; each shard is its own step, run on its own "
                   "worker when the executor has them")


def shard_outputs(total: int, shard_size: int) -> Iterator[dg.DynamicOutput[Shard]]:
    """The plan step's ``shards`` output: one dynamic output per shard of ``total`` work items."""
    try:
        shards = plan_shards(total, shard_size)
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc
    for shard in shards:
        yield dg.DynamicOutput(shard, output_name="shards", mapping_key=shard.key)


def sharded_asset(*, name: str, upstream: str, config: type[dg.Config], plan: dg.OpDefinition,
                  shard: dg.OpDefinition, merge: dg.OpDefinition, **asset_args: Any) -> dg.AssetsDefinition:
    """A corpus-version-partitioned asset computed as ``plan -> shard (one step per shard) -> merge``.

    ``plan`` takes the upstream asset as a Nothing input ``after`` and has two outputs: what every
    shard works on (a pinned run id, a task list) and ``shards``. ``shard`` takes both; ``merge``
    takes the first and the list of shard outputs, in shard order.
    """
    steps = (plan, shard, merge)

    def compose(upstream_done):
        source, shards = plan(after=upstream_done)
        return merge(source, shards.map(lambda each: shard(source, each)).collect())

    return dg.graph_asset(
        name=name,
        ins={"upstream_done": dg.AssetIn(key=upstream, dagster_type=dg.Nothing)},
        config=dg.ConfigMapping(config_fn=lambda values: {step.name: {"config": values} for step in steps},
                                config_schema=config.to_config_schema()),
        partitions_def=corpus_versions,
        **asset_args,
    )(compose)
