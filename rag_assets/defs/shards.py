"""Dagster plumbing shared by the sharded assets (question_candidates, rag_answers, evaluation).

Each is a graph-backed asset: a plan step, one dynamically mapped step per shard, and a merge step
that writes the store and yields the materialization (and checks). The asset keeps its name,
partitions, checks and metadata; its run config keeps the one-level shape
``ops: {<asset>: {config: {...}}}`` through a config mapping that hands it to every step.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
import pydantic

from rag_assets.defs.lifecycle import Lifecycle
from rag_assets.shards import Shard, plan_shards

SHARD_SIZE_HELP = ("work items (golden items, generation tasks) per shard; each shard is its own step, run on its own "
                   "worker when the executor has them")


def planned(total: int, shard_size: int) -> list[Shard]:
    """The shards of ``total`` work items; a bad shard size fails the step."""
    try:
        return plan_shards(total, shard_size)
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc


@dataclass(frozen=True)
class ShardWork:
    """What a shard step gets of the plan: its shard and, in a subclass, the rest of its own work, so
    that the step has one input and loads nothing of the plan it does not need."""

    shard: Shard

    @property
    def key(self) -> str:
        return self.shard.key


def shard_outputs(works: Iterable[ShardWork]) -> Iterator[dg.DynamicOutput]:
    """The plan step's ``shards`` output: one dynamic output per shard to run, named by its shard."""
    for work in works:
        yield dg.DynamicOutput(work, output_name="shards", mapping_key=work.key)


@dataclass(frozen=True)
class Step:
    """A step function of a sharded asset; each instance makes its own op of it (its name, its resource keys).

    The function's parameters say what it takes: ``context``; a ``dg.Config`` subclass (the asset's run config);
    ``dg.ConfigurableResource`` subclasses, named by their bare resource keys; the rest are the op's inputs."""

    fn: Callable[..., Any]
    op_args: dict[str, Any] = field(default_factory=dict)

    @property
    def _hints(self) -> dict[str, Any]:
        return typing.get_type_hints(self.fn)

    @property
    def _params(self) -> list[str]:
        return [name for name in inspect.signature(self.fn).parameters if name != "context"]

    @property
    def resources(self) -> list[str]:
        return [name for name in self._params if _subclass(self._hints.get(name), dg.ConfigurableResource)]

    @property
    def config(self) -> str | None:
        return next((name for name in self._params if name not in self.resources
                     and _subclass(self._hints.get(name), dg.Config)), None)

    @property
    def inputs(self) -> list[str]:
        """The op's inputs in order: the function's own, then the Nothing inputs of ``op_args``."""
        own = [name for name in self._params if name not in self.resources and name != self.config]
        return own + [name for name in self.op_args.get("ins", {}) if name not in own]

    def op(self, lifecycle: Lifecycle, **more: Any) -> dg.OpDefinition:
        fn, hints, resources, config = self.fn, self._hints, self.resources, self.config
        ins = {name: dg.In(hints.get(name, Any)) for name in self.inputs} | self.op_args.get("ins", {})

        def arguments(context: dg.OpExecutionContext, given: dict[str, Any]) -> dict[str, Any]:
            services = lifecycle.services(context)
            bound = {name: services.resource(name) for name in resources} | given
            return bound | ({config: hints[config](**context.op_config)} if config else {})

        # unannotated: Dagster reads the op's context type and output type from the compute function
        if inspect.isgeneratorfunction(fn):
            def compute(context, **given):
                yield from fn(context, **arguments(context, given))
        else:
            def compute(context, **given):
                return fn(context, **arguments(context, given))
        return dg.op(name=lifecycle.named(fn.__name__), ins=ins, required_resource_keys=lifecycle.resource_keys(*resources),
                     config_schema=hints[config].to_config_schema() if config else None,
                     **{k: v for k, v in self.op_args.items() if k != "ins"}, **more)(compute)


def _subclass(hint: Any, base: type) -> bool:
    return isinstance(hint, type) and issubclass(hint, base)


def step(**op_args: Any) -> Callable[[Callable[..., Any]], Step]:
    """``@step(...)`` takes ``dg.op``'s arguments but leaves making the op to ``sharded_asset``."""
    return lambda fn: Step(fn, op_args)


def with_defaults(config: type[dg.Config], **defaults: Any) -> type[dg.Config]:
    """``config`` whose fields in ``defaults`` default to an instance's own values (its launchpad shows them);
    a None in ``defaults`` keeps the field's own default."""
    fields = {name: (config.model_fields[name].annotation, value) for name, value in defaults.items()
              if value is not None}
    if not fields:
        return config
    return pydantic.create_model(config.__name__, __base__=config, **fields)


def sharded_asset(lifecycle: Lifecycle, *, name: str, upstream: str, config: type[dg.Config], plan: Step, shard: Step,
                  merge: Step, merge_args: dict[str, Any] | None = None, **asset_args: Any) -> dg.AssetsDefinition:
    """A corpus-version-partitioned asset of ``lifecycle`` computed as ``plan -> shard (one step per shard) -> merge``.

    ``plan`` takes the upstream asset as a Nothing input ``after`` and has two outputs: what the merge
    works from (the judge plan, a task list) and ``shards``, a ``ShardWork`` per shard to run (maybe
    none). ``shard`` takes only its ``ShardWork`` (one input per shard step to load and record); ``merge``
    takes the first and the list of shard outputs, in shard order (a Nothing input when the shards hand
    their results over through the store); ``merge_args`` are more of its op's arguments.
    """
    plan_op, shard_op, merge_op = plan.op(lifecycle), shard.op(lifecycle), merge.op(lifecycle, **(merge_args or {}))
    steps = (plan_op, shard_op, merge_op)

    (work,), (source_name, parts_name) = shard.inputs, merge.inputs

    def compose(upstream_done):
        source, shards = plan_op(after=upstream_done)
        parts = shards.map(lambda shard: shard_op(**{work: shard})).collect()
        return merge_op(**{source_name: source, parts_name: parts})

    return dg.graph_asset(
        name=name,
        key_prefix=lifecycle.key_prefix,
        ins={"upstream_done": dg.AssetIn(key=lifecycle.key(upstream), dagster_type=dg.Nothing)},
        config=dg.ConfigMapping(config_fn=lambda values: {step.name: {"config": values} for step in steps},
                                config_schema=config.to_config_schema()),
        partitions_def=lifecycle.corpus_versions,
        **asset_args,
    )(compose)
