"""The golden_set asset: an immutable, versioned set of accepted items pinned to a corpus version."""

import functools

import dagster as dg

from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.automation import golden_set_condition
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.resources import LLM_POOL, LLMResource, StoreResource
from rag_assets.defs.reuse import last_materialization
from rag_assets.golden.build import build_golden, diff_golden
from rag_assets.golden.export import export_golden
from rag_assets.golden.repin import PinTarget
from rag_assets.scoring.statements import extract_statements
from rag_assets.settings import current_settings
from rag_assets.text.markdown import markdown_table


#: The metadata entry with the digest of the accepted items a golden_set materialization was built from.
ACCEPTED_ITEMS = "accepted_items"


def golden_set_behind(instance: dg.DagsterInstance, asset: dg.AssetKey, store: StoreResource, version: str) -> bool:
    """Whether the store holds accepted items for ``version``'s lineage that the last materialization of
    ``asset`` (golden_set) was not built from: items imported outside Dagster (``rag-assets import-golden``)."""
    record = last_materialization(instance, asset, version)
    entry = record.asset_materialization.metadata.get(ACCEPTED_ITEMS) if record else None
    return entry is not None and entry.value != store.golden().accepted_digest(store.corpus().lineage(version))


@functools.cache
def build_golden_set(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        **lifecycle.corpus_asset("golden", "curated_decisions", "corpus_snapshot"),
        owners=OWNERS,
        kinds={"python", "sql", "json"},
        pool=LLM_POOL,
        code_version="golden-set-v1",
        automation_condition=golden_set_condition(lifecycle),
        description=(
            "The golden set for the corpus version: accepted items, each pinned to this corpus version. A new "
            "immutable version (global number, content hash, parent, diff) is made only when the content changes. "
            "Items carry over from earlier corpus versions by their evidence spans: where a span's text is still in "
            "its document the item stays (repinned at the new offsets and chunks); where it changed or vanished the "
            "item is stale: left out and sent back to review. Exported as JSONL and ragas JSONL. "
            "Each new item's reference answer is split into statements once (for context recall), through the judge."
        ),
    )
    @lifecycle.keyed
    def golden_set(context: dg.AssetExecutionContext, store: StoreResource, llm: LLMResource) -> dg.MaterializeResult:
        version = context.partition_key
        corpus, golden = store.corpus(), store.golden()
        chunks = corpus.snapshot_chunks(version)
        if not chunks:
            raise dg.Failure(description=f"corpus snapshot {version} is not in the store; materialize corpus_snapshot first")
        lineage = corpus.lineage(version)
        accepted = {ACCEPTED_ITEMS: dg.MetadataValue.text(golden.accepted_digest(lineage))}
        build = build_golden(PinTarget(version, chunks, corpus, current_settings().evidence_min_overlap), golden.accepted_items(lineage))
        parent = golden.latest_version(lineage)
        saved = golden.save_version(build, parent, diff_golden(golden.version_items(parent.number) if parent else (), build))
        if saved is None:
            context.log.warning(f"no accepted item for {version} yet: review the candidates in the curation outbox")
            return dg.MaterializeResult(metadata={"golden_version": dg.MetadataValue.int(0), "items": dg.MetadataValue.int(0),
                                                  "corpus_version": dg.MetadataValue.text(version), **accepted},
                                        data_version=dg.DataVersion(build.content_hash[:16]))
        items = golden.version_items(saved.number)
        budget = llm.budget(context.run_id, "golden_set", None, store.llm_spend())
        statements, stats = extract_statements(items, llm.judge_client(journal=store.llm_batches(), budget=budget),
                                               store.llm_cache())
        golden.set_reference_statements(statements)
        jsonl, ragas = export_golden(items, saved.number, store.golden_export_dir(version), {c.chunk_id: c.text for c in chunks},
                                     store.corpus().evidence_texts({e for item in items for e in item.evidence}))
        by_type: dict[str, int] = {}
        for item in items:
            by_type[item.question_type] = by_type.get(item.question_type, 0) + 1
        diff = saved.diff
        changes = [(item_id, kind) for kind in diff.KINDS for item_id in getattr(diff, kind)]
        context.log.info(f"golden set v{saved.number} for {version}: {len(items)} items "
                         f"({'new version' if saved.created else 'unchanged'}), {len(build.stale)} stale")
        return dg.MaterializeResult(
            metadata={
                "golden_version": dg.MetadataValue.int(saved.number),
                "new_version": dg.MetadataValue.bool(saved.created),
                "parent_version": dg.MetadataValue.int(saved.parent_number) if saved.parent_number else dg.MetadataValue.text("none"),
                "corpus_version": dg.MetadataValue.text(version),
                "content_hash": dg.MetadataValue.text(saved.content_hash),
                "items": dg.MetadataValue.int(len(items)),
                "added": dg.MetadataValue.int(len(diff.added)),
                "removed": dg.MetadataValue.int(len(diff.removed)),
                "changed": dg.MetadataValue.int(len(diff.changed)),
                "stale": dg.MetadataValue.int(len(diff.stale)),
                "repinned": dg.MetadataValue.int(len(diff.repinned)),
                "diff": dg.MetadataValue.md(markdown_table(["item", "change"], changes)),
                "by_type": dg.MetadataValue.md(markdown_table(["type", "items"], sorted(by_type.items()))),
                "export_jsonl": dg.MetadataValue.path(str(jsonl)),
                "export_ragas": dg.MetadataValue.path(str(ragas)),
                "statements_extracted": dg.MetadataValue.int(len(statements)),
                **accepted,
                **llm_metadata(stats),
            },
            data_version=dg.DataVersion(saved.content_hash[:16]),
        )

    return golden_set


golden_set = build_golden_set(BUNDLED)
