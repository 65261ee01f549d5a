"""Curation assets: the review queue written for experts, and their decisions read back.

An import commits its decisions to the store, then files the review file away, then Dagster records the
materialization: three stores, no shared transaction. So what curated_decisions records is the store's
own account, the digest of every review file applied for the corpus version (its data version and the
``APPLIED_FILES`` entry), and a run that finds the store ahead of the last record (a process killed
between the commit and the record) imports again: the applied file is recognised by its hash, nothing
is applied twice, and the golden set is built from the decisions.
"""

import functools
from collections.abc import Sequence

import dagster as dg

from rag_assets.app.curation_import import DecisionImport, applied_files_digest, import_decisions
from rag_assets.app.review_queue import write_review_queue
from rag_assets.corpus.models import sha256_hex
from rag_assets.curation.inbox import ImportResult
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.reuse import last_materialization
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.text.markdown import markdown_table

REVIEW_FILES_CHECK = "review_files_valid"
#: The metadata entry with the digest of the review files the store had applied when the asset was recorded.
APPLIED_FILES = "applied_files_digest"


def decisions_unrecorded(instance: dg.DagsterInstance, asset: dg.AssetKey, repo: SqlCurationRepository,
                         version: str) -> bool:
    """Whether the store applied review files for ``version`` that the last materialization of ``asset``
    (curated_decisions) does not record: the run that imported them died before Dagster recorded it."""
    record = last_materialization(instance, asset, version)
    entry = record.asset_materialization.metadata.get(APPLIED_FILES) if record else None
    return entry is None or entry.value != applied_files_digest(repo, version)


@functools.cache
def build_curation_queue(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "curation"),
        **lifecycle.corpus_asset("curation", "question_candidates"),
        owners=OWNERS,
        kinds={"python", "csv", "excel"},
        automation_condition=dg.AutomationCondition.eager(),
        description=(
            "The review files for domain experts: every pending candidate of the corpus version with its "
            "evidence, as an .xlsx workbook (instructions, drop-down, locked evidence, full passages), CSV "
            "(UTF-8 with BOM, formula cells neutralised) and JSONL in the curation outbox. Experts fill decision "
            "(accept/reject/edit), edited_question, edited_answer, notes and reviewer, then drop the file in the inbox."
        ),
    )
    def curation_queue(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        services = lifecycle.services(context)
        queue = write_review_queue(services.store, services.curation.folders().outbox, context.partition_key)
        by_type: dict[str, int] = {}
        for candidate in queue.pending:
            by_type[candidate.question_type] = by_type.get(candidate.question_type, 0) + 1
        return dg.MaterializeResult(
            metadata={
                "pending": dg.MetadataValue.int(len(queue.pending)),  # awaiting_review: conflicts too
                "conflicts": dg.MetadataValue.int(len(queue.conflicts)),
                "requeued_stale": dg.MetadataValue.int(sum(1 for c in queue.pending if c.origin_item_id)),
                "review_workbook": dg.MetadataValue.path(str(queue.xlsx_path)),
                "review_csv": dg.MetadataValue.path(str(queue.csv_path)),
                "review_jsonl": dg.MetadataValue.path(str(queue.jsonl_path)),
                "by_type": dg.MetadataValue.md(markdown_table(["type", "pending"], sorted(by_type.items()))),
                "preview": dg.MetadataValue.md(markdown_table(
                    ["candidate", "type", "question"],
                    [(r["candidate_id"], r["question_type"], r["question"]) for r in queue.rows], limit=15)),
            },
            data_version=dg.DataVersion(sha256_hex("\n".join(r["candidate_id"] for r in queue.rows))[:16]),
        )

    return curation_queue


curation_queue = build_curation_queue(BUNDLED)


class DecisionImportConfig(dg.Config):
    """Which inbox files to import (names in the inbox, or absolute paths); empty means every inbox
    file that declares this corpus version. ``accept_all`` is trial mode (``rag-assets run --accept-all``):
    every candidate still pending becomes a golden item labelled ``generated:unreviewed``."""

    files: list[str] = []
    accept_all: bool = False


def decisions_metadata(done: DecisionImport) -> dict[str, dg.MetadataValue]:
    """The import's files and counts, and the version's conflicts and reviewer agreement after it."""
    agreement, results = done.agreement, done.results
    return {
        "conflicts": dg.MetadataValue.int(len(done.conflicts)),
        "conflict_list": dg.MetadataValue.md(markdown_table(
            ["candidate", "standing decisions"],
            [(c.candidate_id, "; ".join(f"{who}: {what[0]}" for who, what in sorted(c.decisions.items())))
             for c in done.conflicts])),
        "reviewer_agreement": dg.MetadataValue.md(markdown_table(
            ["reviewer", "reviewer", "items both decided", "same decision", "Cohen's kappa"],
            [(a.first, a.second, a.items, f"{a.observed:.3f}", "-" if a.kappa is None else f"{a.kappa:.3f}")
             for a in agreement])),
        **({"cohens_kappa": dg.MetadataValue.float(round(agreement[0].kappa, 4))}
           if len(agreement) == 1 and agreement[0].kappa is not None else {}),
        "accepted_unreviewed": dg.MetadataValue.int(done.accepted_unreviewed),
        "files": dg.MetadataValue.int(len(results)),
        "files_applied": dg.MetadataValue.int(sum(1 for r in results if r.status == "applied")),
        "files_rejected": dg.MetadataValue.int(len(done.rejected)),
        APPLIED_FILES: dg.MetadataValue.text(done.applied),
        **{key: dg.MetadataValue.int(value) for key, value in done.totals.items()},
        "imports": dg.MetadataValue.md(markdown_table(
            ["file", "status", "moved to", "report"],
            [(r.source, r.status, r.moved_to, r.report or "") for r in results])),
    }


def review_files_check(name: str, kind: str, results: Sequence[ImportResult]) -> dg.AssetCheckResult:
    """The check that every imported file of ``kind`` (a question review, a judge review) passed validation: when
    one did not, its line names how many were rejected, the first one's name and first problem, and where the
    reports are, so a terminal shows why (ERROR: the import's blocking check fails the run)."""
    rejected = [r for r in results if r.status == "rejected"]
    description = f"every {kind} file was valid"
    if rejected:
        first = rejected[0]
        more = f" (and {len(first.problems) - 1} more problem(s))" if len(first.problems) > 1 else ""
        reason = f"{first.problems[0]}{more}" if first.problems else "see its report"
        description = (f"{len(rejected)} {kind} file(s) rejected, nothing from them applied: {first.source}: "
                       f"{reason}; see the report beside each in {first.moved_to.parent}")
    return dg.AssetCheckResult(
        check_name=name, passed=not rejected, severity=dg.AssetCheckSeverity.ERROR, description=description,
        metadata={"problems": dg.MetadataValue.md(markdown_table(
            ["file", "problem"], [(r.source, str(p)) for r in rejected for p in r.problems]))})


@functools.cache
def build_curated_decisions(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "curation"),
        **lifecycle.corpus_asset("curation", "question_candidates"),
        owners=OWNERS,
        kinds={"python", "sql"},
        check_specs=[dg.AssetCheckSpec(
            REVIEW_FILES_CHECK, asset=lifecycle.key("curated_decisions"), blocking=True,
            partitions_def=lifecycle.corpus_versions,
            description="Every imported review file passed validation (required columns, allowed decisions, known "
                        "candidate ids, this corpus version, edits with text, no conflicting duplicates, reviewer, "
                        "UTF-8, no formula cells). A rejected file is applied not at all and blocks the golden set.")],
        description=(
            "Expert decisions imported from reviewed files in the curation inbox. Each file is validated whole "
            "(great-expectations and the project's rules) and applied in one transaction, then moved to "
            "processed/; a bad file goes to rejected/ with an error report naming row, field and problem."
        ),
    )
    def curated_decisions(context: dg.AssetExecutionContext, config: DecisionImportConfig):
        services = lifecycle.services(context)
        done = import_decisions(services.store, services.curation.folders(), services.curation.limits(),
                                context.partition_key, config.files, config.accept_all)
        if done.missing:
            context.log.warning(f"not in the inbox any more (already imported?): {', '.join(map(str, done.missing))}")
        yield dg.MaterializeResult(
            metadata=decisions_metadata(done),
            data_version=dg.DataVersion(done.data_version),
            check_results=[review_files_check(REVIEW_FILES_CHECK, "review", done.results)],
        )

    return curated_decisions


curated_decisions = build_curated_decisions(BUNDLED)
