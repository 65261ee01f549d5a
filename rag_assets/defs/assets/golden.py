"""The golden_set asset: an immutable, versioned set of accepted items pinned to a corpus version."""

import functools
from collections.abc import Iterator

import dagster as dg

from rag_assets.app.golden import GoldenOutcome, SnapshotMissing, build_golden_version, nobody_reviewed
from rag_assets.curation.accept_all import unreviewed, unreviewed_note
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.automation import golden_set_condition
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.resources import LLM_POOL, StoreResource, budget_failure
from rag_assets.defs.reuse import last_materialization
from rag_assets.evidence.locate import LOCATOR_VERSION
from rag_assets.llm.client import LLMClient
from rag_assets.settings import current_settings
from rag_assets.text.markdown import markdown_table


#: The metadata entries with how many references could not be split into statements, and the first error.
STATEMENTS_FAILED, STATEMENTS_FIRST_ERROR = "statements_failed", "statements_first_error"

#: The metadata entry with the digest of the accepted items a golden_set materialization was built from.
ACCEPTED_ITEMS = "accepted_items"


def golden_set_behind(instance: dg.DagsterInstance, asset: dg.AssetKey, store: StoreResource, version: str) -> bool:
    """Whether the store holds accepted items for ``version``'s lineage that the last materialization of
    ``asset`` (golden_set) was not built from: items imported outside Dagster (``rag-assets import-golden``)."""
    record = last_materialization(instance, asset, version)
    entry = record.asset_materialization.metadata.get(ACCEPTED_ITEMS) if record else None
    return entry is not None and entry.value != store.golden().accepted_digest(store.corpus().lineage(version))


def golden_metadata(outcome: GoldenOutcome) -> dict[str, dg.MetadataValue]:
    """What the UI shows of a build; a build without a version has only its version, item count and inputs."""
    accepted = {ACCEPTED_ITEMS: dg.MetadataValue.text(outcome.accepted)}
    saved, version = outcome.saved, dg.MetadataValue.text(outcome.version)
    if saved is None:
        return {"golden_version": dg.MetadataValue.int(0), "items": dg.MetadataValue.int(0), "corpus_version": version,
                **accepted}
    diff = saved.diff
    jsonl, ragas = outcome.exports or ("", "")
    return {
        "golden_version": dg.MetadataValue.int(saved.number),
        "new_version": dg.MetadataValue.bool(saved.created),
        "parent_version": dg.MetadataValue.int(saved.parent_number) if saved.parent_number else dg.MetadataValue.text("none"),
        "corpus_version": version,
        "content_hash": dg.MetadataValue.text(saved.content_hash),
        "items": dg.MetadataValue.int(len(outcome.items)),
        "added": dg.MetadataValue.int(len(diff.added)),
        "removed": dg.MetadataValue.int(len(diff.removed)),
        "changed": dg.MetadataValue.int(len(diff.changed)),
        "stale_new": dg.MetadataValue.int(len(diff.stale)),  # went stale in this version
        "stale_total": dg.MetadataValue.int(len(diff.stale_total)),  # and those still stale since an earlier one
        "repinned": dg.MetadataValue.int(len(diff.repinned)),
        "moved": dg.MetadataValue.int(len(diff.moved)),
        "diff": dg.MetadataValue.md(markdown_table(["item", "change"], outcome.changes)),
        "by_type": dg.MetadataValue.md(markdown_table(["type", "items"], outcome.by_type)),
        "export_jsonl": dg.MetadataValue.path(str(jsonl)),
        "export_ragas": dg.MetadataValue.path(str(ragas)),
        "statements_extracted": dg.MetadataValue.int(outcome.statements),
        # the references whose split into statements failed (asked again next build), and the first error:
        # the golden_set_statements check warns on them
        STATEMENTS_FAILED: dg.MetadataValue.int(len(outcome.statement_failures)),
        **({STATEMENTS_FIRST_ERROR: dg.MetadataValue.text(next(iter(outcome.statement_failures.values())))}
           if outcome.statement_failures else {}),
        **({"unreviewed": dg.MetadataValue.int(len(trial)),
            "unreviewed_note": dg.MetadataValue.text(unreviewed_note(len(trial), len(outcome.items)))}
           if (trial := unreviewed(outcome.items)) else {}),
        **accepted,
        **(llm_metadata(outcome.stats) if outcome.stats else {}),
    }


@functools.cache
def build_golden_set(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "llm"),
        **lifecycle.corpus_asset("golden", "curated_decisions", "corpus_snapshot"),
        owners=OWNERS,
        kinds={"python", "sql", "json"},
        pool=LLM_POOL,
        code_version=f"golden-set-v1+{LOCATOR_VERSION}",
        automation_condition=golden_set_condition(lifecycle),
        output_required=False,
        description=(
            "The golden set for the corpus version: accepted items, each pinned to this corpus version. A new "
            "immutable version (global number, content hash, parent, diff) is made only when the content changes. "
            "Items carry over from earlier corpus versions by their evidence spans: where a span's text is still in "
            "its document the item stays (repinned at the new offsets and chunks), and where its document was renamed "
            "with the same content it moves with it; where it changed or vanished the item is stale: left out and sent "
            "back to review (stale_new: gone stale in this version; stale_total: with those still stale since an "
            "earlier one). Exported as JSONL and ragas JSONL. "
            "Each new item's reference answer is split into statements once (for context recall), through the judge."
        ),
    )
    def golden_set(context: dg.AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
        services = lifecycle.services(context)
        store, llm, version = services.store, services.llm, context.partition_key
        if nobody_reviewed(store, version):  # no output: its checks and what reads it are skipped, nothing fails
            context.log.info(f"nobody has reviewed corpus version {version} yet: no golden set is built; review the "
                             "candidates in the curation outbox and drop the file in the inbox")
            return

        def judge() -> LLMClient:
            budget = llm.budget(context.run.run_id, "golden_set", None, store.llm_spend())
            return llm.judge_client(journal=store.llm_batches(), budget=budget)

        try:
            with budget_failure("judge", asset_limit=False):
                outcome = build_golden_version(store, version, judge, store.golden_export_dir(version),
                                               current_settings().evidence_min_overlap)
        except SnapshotMissing as exc:
            raise dg.Failure(description=str(exc)) from exc
        if outcome.saved is None:
            context.log.warning(f"no accepted item for {version} yet: review the candidates in the curation outbox")
        else:
            context.log.info(f"golden set v{outcome.saved.number} for {version}: {len(outcome.items)} items "
                             f"({'new version' if outcome.saved.created else 'unchanged'}), "
                             f"stale_total={len(outcome.build.stale)}")
        yield dg.MaterializeResult(metadata=golden_metadata(outcome), data_version=dg.DataVersion(
            (outcome.saved.content_hash if outcome.saved else outcome.build.content_hash)[:16]))

    return golden_set


golden_set = build_golden_set(BUNDLED)
