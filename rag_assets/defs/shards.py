"""Dagster plumbing shared by the sharded assets (question_candidates, rag_answers, evaluation).

Each is a graph-backed asset: a plan step, one dynamically mapped step per shard, and a merge step
that writes the store and yields the materialization (and checks). The asset keeps its name,
partitions, checks and metadata; its run config keeps the one-level shape
``ops: {<asset>: {config: {...}}}`` through a config mapping that hands it to every step.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import dagster as dg

from rag_assets.shards import Shard, plan_shards

SHARD_SIZE_HELP = ("work items (golden items, generation tasks) per shard; each shard is its own step, run on its own "
                   "worker when the executor has them")


def shard_outputs(total: int, shard_size: int) -> Iterator[dg.DynamicOutput[Shard]]:
    try:
        shards = plan_shards(total, shard_size)
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc
    for shard in shards:
        yield dg.DynamicOutput(shard, output_name="shards", mapping_key=shard.key)


def to_every_op(config: dg.Config, ops: Sequence[dg.OpDefinition]) -> dict:
    """The run config of each step of a sharded asset: the asset's config, whole."""
    return {op.name: {"config": config.model_dump()} for op in ops}
