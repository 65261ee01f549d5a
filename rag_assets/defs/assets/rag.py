"""The rag_answers asset: the configured RAG system run over the current golden-set version."""

import dagster as dg
import numpy as np

from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.assets.golden import golden_set
from rag_assets.defs.automation import EAGER_PAST_CHECKS
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import LLM_POOL, LLMResource, RagSystemResource, StoreResource
from rag_assets.errors import RagAssetsError
from rag_assets.rag.models import RagQuery
from rag_assets.rag.prompts import RAG_ANSWER
from rag_assets.rag.system import config_hash, run_rag
from rag_assets.report.markdown import markdown_table


@dg.asset(
    partitions_def=corpus_versions,
    deps=[golden_set],
    group_name="rag",
    owners=OWNERS,
    kinds={"python", "anthropic"},
    code_version=RAG_ANSWER.ref,
    pool=LLM_POOL,
    automation_condition=EAGER_PAST_CHECKS,
    description=(
        "The configured RAG system (the built-in BM25 reference system, your Python callable, or your HTTP "
        "endpoint) run over the newest golden-set version of this corpus version: answer, ranked retrieved "
        "chunks with scores, citations, latency and tokens per item, or an error record; the run always "
        "finishes. Records which golden version, system (name and config hash) and corpus version were used."
    ),
)
def rag_answers(context: dg.AssetExecutionContext, store: StoreResource, llm: LLMResource,
                rag: RagSystemResource) -> dg.MaterializeResult:
    version = context.partition_key
    golden = store.golden().latest_version([version])
    if golden is None:
        raise dg.Failure(description=f"no golden-set version for {version} yet; review candidates first")
    items = store.golden().version_items(golden.number)
    chunks = store.corpus().snapshot_chunks(version)
    try:
        system = rag.system(version, chunks, llm.client(journal=store.llm_batches()), store.llm_cache(), store.index_dir())
    except (RagAssetsError, ValueError) as exc:
        raise dg.Failure(description=f"cannot set up the RAG system: {exc}") from exc
    queries = [RagQuery(i.item_id, i.question, version) for i in items]
    responses = run_rag(system, queries, {c.chunk_id: c.text for c in chunks})
    run = store.rag().save_run(version, golden.number, system.name, config_hash(system), system.config(), responses,
                               {i.item_id: i.revision for i in items})
    latencies = np.array([r.latency_ms for r in responses]) if responses else np.zeros(1)
    errors: dict[str, int] = {}
    for response in responses:
        if response.error_kind:
            errors[response.error_kind] = errors.get(response.error_kind, 0) + 1
    metadata = {
        "rag_run": dg.MetadataValue.text(run.run_id),
        "system": dg.MetadataValue.text(system.name),
        "system_config_hash": dg.MetadataValue.text(run.system_config_hash),
        "system_config": dg.MetadataValue.json(system.config()),
        "golden_version": dg.MetadataValue.int(golden.number),
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
        "errors_by_kind": dg.MetadataValue.md(markdown_table(["kind", "items"], sorted(errors.items()))),
        "failed_items": dg.MetadataValue.md(markdown_table(
            ["item", "kind", "error"], [(r.item_id, r.error_kind, r.error) for r in responses if not r.ok])),
    }
    if hasattr(system, "stats"):
        metadata.update(llm_metadata(system.stats))
    return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(run.run_id))
