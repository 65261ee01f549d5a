"""The rag_answers asset: the configured RAG system run over the current golden-set version."""

import functools
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import numpy as np
from pydantic import Field

from rag_assets.console import terminal_progress
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.automation import EAGER_PAST_CHECKS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.resources import LLM_POOL, LLMResource, RagSystemResource, StoreResource, budget_failure
from rag_assets.defs.shards import SHARD_SIZE_HELP, ShardWork, planned, shard_outputs, sharded_asset, step
from rag_assets.errors import RagAssetsError
from rag_assets.evidence.locate import LOCATOR_VERSION
from rag_assets.llm.results import LLMStats
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagResponse
from rag_assets.rag.prompts import RAG_ANSWER
from rag_assets.rag.system import RagSystem, answer_items, config_hash, context_mapping
from rag_assets.store.rag_repository import RagRun
from rag_assets.text.markdown import markdown_table


class RagRunConfig(dg.Config):
    """Golden items per RAG shard."""

    shard_size: int = Field(default=250, description=SHARD_SIZE_HELP)


@dataclass(frozen=True)
class RagPlan:
    """What the merge records the run under: one golden version, one system (its identity, never secrets)."""

    golden_version: int
    system_name: str
    system_config_hash: str
    system_config: dict


@dataclass(frozen=True)
class ShardAnswers:
    responses: list[RagResponse]
    stats: LLMStats | None  # the reference system's LLM tally; user systems have none


def snapshot_chunks(store: StoreResource, version: str) -> SnapshotChunks:
    """The snapshot's chunks read from the store as needed: by id, or all of them once."""
    corpus = store.corpus()
    return SnapshotChunks(lambda ids: corpus.snapshot_chunks(version, ids), lambda: corpus.snapshot_chunks(version),
                          lambda: corpus.documents(version))


def _system(version: str, chunks: SnapshotChunks, store: StoreResource, llm: LLMResource,
            rag: RagSystemResource, run_id: str) -> RagSystem:
    """The reference system's LLM spends within the run's budget (``llm.max_cost_usd``)."""
    client = llm.client(journal=store.llm_batches(), budget=llm.budget(run_id, "rag_answers", None, store.llm_spend()))
    snapshot = store.corpus().get_snapshot(version)
    try:
        return rag.system(version, chunks, client, store.llm_cache(), store.index_dir(),
                          Path(snapshot.corpus_root) if snapshot else None)
    except (RagAssetsError, ValueError) as exc:
        raise dg.Failure(description=f"cannot set up the RAG system: {exc}") from exc


@dataclass(frozen=True)
class RagWork(ShardWork):
    """One answer shard's own work: the golden version its items come from."""

    golden_version: int


@step(ins={"after": dg.In(dg.Nothing)}, out={"plan": dg.Out(RagPlan), "shards": dg.DynamicOut(RagWork)})
def plan_rag_shards(context: dg.OpExecutionContext, config: RagRunConfig, store: StoreResource, llm: LLMResource,
                    rag: RagSystemResource):
    """Pins the newest golden version and sets the system up once (the BM25 index is built here, and
    only loaded by the shards)."""
    version = context.partition_key
    golden = store.golden().latest_version([version])
    if golden is None:
        raise dg.Failure(description=f"no golden-set version for {version} yet; review candidates first")
    system = _system(version, snapshot_chunks(store, version), store, llm, rag, context.run_id)
    yield dg.Output(RagPlan(golden.number, system.name, config_hash(system), system.config()), output_name="plan")
    yield from shard_outputs(RagWork(shard, golden.number)
                             for shard in planned(len(store.golden().version_members(golden.number)), config.shard_size))


@step(code_version=RAG_ANSWER.ref, pool=LLM_POOL, out=dg.Out(ShardAnswers))
def answer_shard(context: dg.OpExecutionContext, store: StoreResource, llm: LLMResource, rag: RagSystemResource,
                 work: RagWork) -> dg.Output[ShardAnswers]:
    version = context.partition_key
    golden = store.golden()
    items = golden.version_items(work.golden_version, work.shard.take(golden.version_item_ids(work.golden_version)))
    chunks = snapshot_chunks(store, version)
    system = _system(version, chunks, store, llm, rag, context.run_id)
    with budget_failure("RAG system", asset_limit=False):  # the whole step fails: no answer goes missing unsaid
        responses = answer_items(system, items, version, chunks, terminal_progress("rag answers"))
    stats = getattr(system, "stats", None)
    return dg.Output(ShardAnswers(responses, stats),
                     metadata={"items": dg.MetadataValue.int(len(items)),
                               "errors": dg.MetadataValue.int(sum(1 for r in responses if not r.ok)),
                               **(llm_metadata(stats) if stats else {})})


@step(out={"result": dg.Out(dg.Nothing)})
def save_rag_run(context: dg.OpExecutionContext, store: StoreResource, plan: RagPlan, parts: list[ShardAnswers]):
    """Saves the shards' answers as one RAG run."""
    version = context.partition_key
    responses = [r for part in parts for r in part.responses]
    run = store.rag().save_run(version, plan.golden_version, plan.system_name, plan.system_config_hash,
                               plan.system_config, responses, store.golden().version_members(plan.golden_version))
    metadata = _run_metadata(run, plan, version, responses)
    tallies = [part.stats for part in parts if part.stats is not None]
    if tallies:
        stats = LLMStats()
        for tally in tallies:
            stats.merge(tally)
        metadata.update(llm_metadata(stats))
    yield dg.Output(None, output_name="result", metadata=metadata, data_version=dg.DataVersion(run.run_id))


def _run_metadata(run: RagRun, plan: RagPlan, version: str, responses: list[RagResponse]) -> dict[str, dg.MetadataValue]:
    """The run's identity, answers, errors, latency, tokens and cost, and how its contexts map to chunks."""
    latencies = np.array([r.latency_ms for r in responses]) if responses else np.zeros(1)
    errors: dict[str, int] = {}
    for response in responses:
        if response.error_kind:
            errors[response.error_kind] = errors.get(response.error_kind, 0) + 1
    unmapped_share, methods = context_mapping(responses)
    return {
        "rag_run": dg.MetadataValue.text(run.run_id),
        "system": dg.MetadataValue.text(plan.system_name),
        "system_config_hash": dg.MetadataValue.text(run.system_config_hash),
        "system_config": dg.MetadataValue.json(plan.system_config),
        "golden_version": dg.MetadataValue.int(plan.golden_version),
        "corpus_version": dg.MetadataValue.text(version),
        "items": dg.MetadataValue.int(len(responses)),
        "answered": dg.MetadataValue.int(sum(1 for r in responses if r.ok)),
        "errors": dg.MetadataValue.int(run.errors),
        "declined": dg.MetadataValue.int(sum(1 for r in responses if r.extra.get("declined"))),
        "latency_p50_ms": dg.MetadataValue.float(round(float(np.percentile(latencies, 50)), 2)),
        "latency_p95_ms": dg.MetadataValue.float(round(float(np.percentile(latencies, 95)), 2)),
        "input_tokens": dg.MetadataValue.int(sum(r.input_tokens for r in responses)),
        "output_tokens": dg.MetadataValue.int(sum(r.output_tokens for r in responses)),
        "cost_usd": dg.MetadataValue.float(round(sum(r.cost_usd or 0.0 for r in responses), 6)),
        "contexts_unmapped_share": dg.MetadataValue.float(unmapped_share),
        "context_mapping": dg.MetadataValue.json(methods),
        "contexts_by_item": dg.MetadataValue.md(markdown_table(
            ["item", "contexts", "unmapped share", "mapping"],
            [(r.item_id, len(r.retrieved), round(r.contexts_unmapped_share or 0.0, 3),
              ", ".join(f"{m} {n}" for m, n in context_mapping([r])[1].items()))
             for r in responses if r.ok and any(c.chunk_id is None for c in r.retrieved)])),
        "errors_by_kind": dg.MetadataValue.md(markdown_table(["kind", "items"], sorted(errors.items()))),
        "failed_items": dg.MetadataValue.md(markdown_table(
            ["item", "kind", "error"], [(r.item_id, r.error_kind, r.error) for r in responses if not r.ok])),
    }


@functools.cache
def build_rag_answers(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    return sharded_asset(
        lifecycle,
        name="rag_answers",
        upstream="golden_set",
        config=RagRunConfig,
        plan=plan_rag_shards,
        shard=answer_shard,
        merge=save_rag_run,
        group_name=lifecycle.named("rag"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        code_version=lifecycle.generated(f"{RAG_ANSWER.ref}+{LOCATOR_VERSION}"),
        automation_condition=EAGER_PAST_CHECKS,
        description=(
            "The configured RAG system (the built-in BM25 reference system, your Python callable, or your HTTP "
            "endpoint) run over the newest golden-set version of this corpus version: answer, ranked retrieved "
            "chunks with scores, citations, latency and tokens per item, or an error record; the run always "
            "finishes. Records which golden version, system (name and config hash) and corpus version were used. "
            "The items are answered in shards (shard_size), one step each, saved as one run by save_rag_run."
        ),
    )


rag_answers = build_rag_answers(BUNDLED)
