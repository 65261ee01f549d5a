"""The question_candidates asset: LLM-generated questions for chunks not covered before."""

import functools
from dataclasses import dataclass

import dagster as dg
from pydantic import Field

from rag_assets.console import terminal_progress
from rag_assets.corpus.models import sha256_hex
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.resources import LLM_POOL, LLMResource, StoreResource, budget_failure, max_cost_help
from rag_assets.defs.shards import SHARD_SIZE_HELP, ShardWork, planned, shard_outputs, sharded_asset, step
from rag_assets.generation.generate import ask_generator, collect_candidates, generation_calls
from rag_assets.generation.models import DEFAULT_TYPE_MIX, GenerationConfig
from rag_assets.generation.planning import GenerationTask, plan_tasks
from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.golden.repin import PinTarget, pin_items
from rag_assets.golden.requeue import requeue_candidates
from rag_assets.llm.results import LLMResult, LLMStats
from rag_assets.settings import current_settings
from rag_assets.text.markdown import markdown_table


class GenerationRunConfig(dg.Config):
    """Run config: the type mix (weights), questions per task, tasks per run, dedupe threshold, seed,
    generation tasks per shard step, and the most generation may spend in one run."""

    type_mix: dict[str, float] = dict(DEFAULT_TYPE_MIX)
    per_task: int = 1
    max_tasks: int = 60
    dedupe_threshold: float = 0.8
    seed: int = 0
    shard_size: int = Field(default=20, description=SHARD_SIZE_HELP)
    max_cost_usd: float | None = Field(default=None, description=max_cost_help("question generation"))

    def to_domain(self) -> GenerationConfig:
        return GenerationConfig(type_mix=dict(self.type_mix), per_task=self.per_task, max_tasks=self.max_tasks,
                                dedupe_threshold=self.dedupe_threshold, seed=self.seed)


def _settings(config: GenerationRunConfig, llm: LLMResource, store: StoreResource, run_id: str):
    budget = llm.budget(run_id, "question_candidates", config.max_cost_usd, store.llm_spend())
    try:
        return config.to_domain(), llm.client(journal=store.llm_batches(), budget=budget)
    except ValueError as exc:
        raise dg.Failure(description=f"invalid generation config: {exc}") from exc


@dataclass(frozen=True)
class GenerationWork(ShardWork):
    """One generation shard's own tasks, not the run's whole list."""

    tasks: list[GenerationTask]


@step(ins={"after": dg.In(dg.Nothing)}, out={"tasks": dg.Out(list), "shards": dg.DynamicOut(GenerationWork)})
def plan_generation_shards(context: dg.OpExecutionContext, config: GenerationRunConfig, llm: LLMResource,
                           store: StoreResource):
    """Plans the tasks once (for chunks no earlier version covered), so every shard works on the same list."""
    version = context.partition_key
    chunks = store.corpus().snapshot_chunks(version)
    if not chunks:
        raise dg.Failure(description=f"corpus snapshot {version} has no chunks in the store; materialize corpus_snapshot first")
    settings, client = _settings(config, llm, store, context.run_id)
    tasks = plan_tasks(chunks, store.candidates().covered_chunk_ids(excluding_version=version), settings)
    context.log.info(f"pre-flight estimate ({client.provider}/{client.model}): "
                     f"{client.estimate(generation_calls(tasks), store.llm_cache()).describe()}")
    yield dg.Output(tasks, output_name="tasks")
    yield from shard_outputs(GenerationWork(shard, shard.take(tasks)) for shard in planned(len(tasks), config.shard_size))


@step(code_version=GENERATE_QUESTIONS.ref, pool=LLM_POOL, out=dg.Out(list[LLMResult]))
def generate_shard(context: dg.OpExecutionContext, config: GenerationRunConfig, llm: LLMResource, store: StoreResource,
                   work: GenerationWork) -> dg.Output[list[LLMResult]]:
    """Asks the generator for one shard's tasks; every answer lands in the LLM cache as it arrives. Fails before
    any request when its estimate does not fit the budget, and stops sending once the run or the asset spent it."""
    _, client = _settings(config, llm, store, context.run_id)
    with budget_failure("generation"):
        results = ask_generator(work.tasks, client, store.llm_cache(), terminal_progress("generation"))
    stats = LLMStats().add(results).estimated(client.last_estimate.cost_usd if client.last_estimate else 0.0)
    return dg.Output(results, metadata={"tasks": dg.MetadataValue.int(len(results)),
                                        "failed_calls": dg.MetadataValue.int(sum(1 for r in results if not r.ok)),
                                        **llm_metadata(stats)})


@step(out={"result": dg.Out(dg.Nothing)})
def save_candidates(context: dg.OpExecutionContext, config: GenerationRunConfig, store: StoreResource,
                    tasks: list[GenerationTask], parts: list[list[LLMResult]]):
    """Vets and dedupes the answers of all shards together, re-queues stale items and saves the candidates."""
    version = context.partition_key
    repo = store.candidates()
    outcome = collect_candidates(tasks, [r for part in parts for r in part], version,
                                 repo.questions(excluding_version=version), config.dedupe_threshold)
    if tasks and len(outcome.failures) == len(tasks):
        raise dg.Failure(description=f"every generation call failed; first error: {outcome.failures[0].error}",
                         metadata=llm_metadata(outcome.stats))
    chunks = store.corpus().snapshot_chunks(version)
    requeued = _requeue_stale_items(store, version, chunks)
    new = repo.save(outcome.candidates + requeued)
    stored = repo.for_version(version)
    by_type = outcome.by_type()
    metadata = {
        "corpus_version": dg.MetadataValue.text(version),
        "candidates": dg.MetadataValue.int(len(stored)),
        "new_candidates": dg.MetadataValue.int(new),
        "tasks": dg.MetadataValue.int(outcome.tasks),
        "dropped_duplicates": dg.MetadataValue.int(len(outcome.duplicates)),
        "rejected_questions": dg.MetadataValue.int(len(outcome.rejected)),
        "failed_calls": dg.MetadataValue.int(len(outcome.failures)),
        "requeued_stale_items": dg.MetadataValue.int(len(requeued)),
        **{f"candidates_{qtype}": dg.MetadataValue.int(count) for qtype, count in by_type.items()},
        "by_type": dg.MetadataValue.md(markdown_table(["type", "candidates this run"], by_type.items())),
        "failures": dg.MetadataValue.md(markdown_table(
            ["task", "error kind", "error"], [(f.key, f.error_kind, f.error) for f in outcome.failures])),
        "duplicates": dg.MetadataValue.md(markdown_table(["dropped", "near-duplicate of"], outcome.duplicates)),
        **llm_metadata(outcome.stats),
    }
    data_version = sha256_hex("\n".join(c.candidate_id for c in stored))[:16]
    yield dg.Output(None, output_name="result", metadata=metadata, data_version=dg.DataVersion(data_version))


@functools.cache
def build_question_candidates(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    return sharded_asset(
        lifecycle,
        name="question_candidates",
        upstream="corpus_snapshot",
        config=GenerationRunConfig,
        plan=plan_generation_shards,
        shard=generate_shard,
        merge=save_candidates,
        group_name=lifecycle.named("generation"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        code_version=GENERATE_QUESTIONS.ref,
        automation_condition=dg.AutomationCondition.eager(),
        description=(
            "Candidate questions of six types (factual, multi_hop, abstractive, comparative, adversarial, "
            "terminology) generated from chunks that no earlier corpus version covered, with reference "
            "answers and relevant chunk ids; near-duplicates dropped. Claude when ANTHROPIC_API_KEY is set, "
            "else the offline generator (labelled so). Golden items of earlier corpus versions whose evidence "
            "changed here are re-queued for review as candidates too. The tasks are asked in shards (shard_size), "
            "one step each; save_candidates dedupes across all of them."
        ),
    )


question_candidates = build_question_candidates(BUNDLED)


def _requeue_stale_items(store: StoreResource, version: str, chunks) -> list:
    """Candidates for golden items of ancestor corpus versions whose evidence changed in this one."""
    corpus = store.corpus()
    ancestors = corpus.lineage(version)[1:]
    if not ancestors:
        return []
    target = PinTarget(version, chunks, corpus, current_settings().evidence_min_overlap)
    return requeue_candidates(pin_items(store.golden().accepted_items(ancestors), target), target)
