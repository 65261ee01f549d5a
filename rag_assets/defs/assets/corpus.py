"""The corpus_snapshot asset: one partition per corpus version."""

import functools

import dagster as dg

from rag_assets.corpus.models import SnapshotOutcome
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.defs.errors import domain_errors_fail_the_step
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.text.markdown import markdown_table

OWNERS = ["team:rag"]


def snapshot_metadata(outcome: SnapshotOutcome) -> dict[str, dg.MetadataValue]:
    diff = outcome.diff
    return {
        "corpus_version": dg.MetadataValue.text(outcome.version_id),
        "corpus_root": dg.MetadataValue.path(outcome.corpus_root),
        "new_version": dg.MetadataValue.bool(outcome.created),
        "parent_version": dg.MetadataValue.text(diff.parent_version or "(first snapshot)"),
        "documents": dg.MetadataValue.int(outcome.document_count),
        "chunks": dg.MetadataValue.int(outcome.chunk_count),
        "megabytes": dg.MetadataValue.float(round(outcome.total_bytes / 1e6, 3)),
        "files_read": dg.MetadataValue.int(outcome.files_read),
        "documents_added": dg.MetadataValue.int(diff.count("added")),
        "documents_changed": dg.MetadataValue.int(diff.count("changed")),
        "documents_removed": dg.MetadataValue.int(diff.count("removed")),
        "documents_renamed": dg.MetadataValue.int(diff.count("renamed")),
        "chunks_added": dg.MetadataValue.int(diff.chunk_total("chunks_added")),
        "chunks_changed": dg.MetadataValue.int(diff.chunk_total("chunks_changed")),
        "chunks_removed": dg.MetadataValue.int(diff.chunk_total("chunks_removed")),
        "skipped_files": dg.MetadataValue.int(len(outcome.skipped)),
        "diff": dg.MetadataValue.md(markdown_table(
            ["document", "change", "chunks added", "chunks changed", "chunks removed"],
            [(d.shown_path, d.change, d.chunks_added, d.chunks_changed, d.chunks_removed) for d in diff.documents],
        )),
        "skipped": dg.MetadataValue.md(markdown_table(["file", "reason"], [(s.path, s.reason) for s in outcome.skipped])),
        "chunker": dg.MetadataValue.json(outcome.chunker.__dict__ | {}),
    }


@functools.cache
def build_corpus_snapshot(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("corpus", "store"),
        **lifecycle.corpus_asset("corpus"),
        owners=OWNERS,
        kinds={"python", "sql"},
        code_version="corpus-snapshot-v1",
        description=(
            "The corpus folder as one immutable, content-hashed version: documents, heading-aware "
            "chunks with stable ids and char offsets, and the diff against the previous version. "
            "The partition key is the corpus version id."
        ),
    )
    def corpus_snapshot(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        services = lifecycle.services(context)
        corpus, store = services.corpus, services.store
        with domain_errors_fail_the_step():
            outcome = snapshot_corpus(
                corpus.resolved_root(), corpus.chunker(), store.corpus(), expected_version=context.partition_key
            )
        context.log.info(
            f"corpus {outcome.version_id}: {outcome.document_count} documents, {outcome.chunk_count} chunks, "
            f"{outcome.files_read} files read, {len(outcome.skipped)} skipped ({store.describe()})"
        )
        return dg.MaterializeResult(metadata=snapshot_metadata(outcome), data_version=dg.DataVersion(outcome.version_id))

    return corpus_snapshot


corpus_snapshot = build_corpus_snapshot(BUNDLED)
