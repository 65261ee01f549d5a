"""The question_candidates asset: LLM-generated questions for chunks not covered before."""

import dagster as dg

from rag_assets.corpus.models import sha256_hex
from rag_assets.defs.assets.corpus import OWNERS, corpus_snapshot
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import LLM_POOL, LLMResource, StoreResource
from rag_assets.generation.generate import estimate, run_generation
from rag_assets.generation.planning import plan_tasks
from rag_assets.generation.models import DEFAULT_TYPE_MIX, GenerationConfig
from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.golden.build import classify
from rag_assets.golden.requeue import requeue_candidates
from rag_assets.report.markdown import markdown_table


class GenerationRunConfig(dg.Config):
    """Run config: the type mix (weights), questions per task, tasks per run, dedupe threshold, seed."""

    type_mix: dict[str, float] = dict(DEFAULT_TYPE_MIX)
    per_task: int = 1
    max_tasks: int = 60
    dedupe_threshold: float = 0.8
    seed: int = 0

    def to_domain(self) -> GenerationConfig:
        return GenerationConfig(type_mix=dict(self.type_mix), per_task=self.per_task, max_tasks=self.max_tasks,
                                dedupe_threshold=self.dedupe_threshold, seed=self.seed)


@dg.asset(
    partitions_def=corpus_versions,
    deps=[corpus_snapshot],
    group_name="generation",
    owners=OWNERS,
    kinds={"python", "anthropic"},
    code_version=GENERATE_QUESTIONS.ref,
    pool=LLM_POOL,
    automation_condition=dg.AutomationCondition.eager(),
    description=(
        "Candidate questions of six types (factual, multi_hop, abstractive, comparative, adversarial, "
        "terminology) generated from chunks that no earlier corpus version covered, with reference "
        "answers and relevant chunk ids; near-duplicates dropped. Claude when ANTHROPIC_API_KEY is set, "
        "else the offline generator (labelled so). Golden items of earlier corpus versions whose evidence "
        "changed here are re-queued for review as candidates too."
    ),
)
def question_candidates(
    context: dg.AssetExecutionContext, config: GenerationRunConfig, llm: LLMResource, store: StoreResource
) -> dg.MaterializeResult:
    version = context.partition_key
    chunks = store.corpus().snapshot_chunks(version)
    if not chunks:
        raise dg.Failure(description=f"corpus snapshot {version} has no chunks in the store; materialize corpus_snapshot first")
    repo = store.candidates()
    try:
        settings = config.to_domain()
        client = llm.client(journal=store.llm_batches())
    except ValueError as exc:
        raise dg.Failure(description=f"invalid generation config: {exc}") from exc
    tasks = plan_tasks(chunks, repo.covered_chunk_ids(excluding_version=version), settings)
    context.log.info(estimate(tasks, client).describe(client))
    outcome = run_generation(tasks, client, store.llm_cache(), version, repo.questions(excluding_version=version),
                             settings.dedupe_threshold)
    if tasks and len(outcome.failures) == len(tasks):
        raise dg.Failure(description=f"every generation call failed; first error: {outcome.failures[0].error}",
                         metadata=llm_metadata(outcome.stats))
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
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(data_version))


def _requeue_stale_items(store: StoreResource, version: str, chunks) -> list:
    """Candidates for golden items of ancestor corpus versions whose evidence changed in this one."""
    corpus = store.corpus()
    ancestors = corpus.lineage(version)[1:]
    if not ancestors:
        return []
    _, stale = classify(store.golden().accepted_items(ancestors), {c.chunk_id: c.content_hash for c in chunks})
    old_chunks = corpus.chunk_texts({ref.chunk_id for entry in stale for ref in entry.missing})
    return requeue_candidates(stale, chunks, old_chunks, version)
