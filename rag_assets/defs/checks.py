"""Asset checks: the gates that keep bad data from flowing on."""

import functools

import dagster as dg

from rag_assets.defs.assets.golden import STATEMENTS_FAILED, STATEMENTS_FIRST_ERROR
from rag_assets.defs.automation import WITH_ITS_ASSET
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.resources import StoreResource
from rag_assets.defs.reuse import last_materialization
from rag_assets.errors import RagAssetsError
from rag_assets.golden.quality import GoldenPolicy, golden_quality
from rag_assets.rag.error_budget import DEFAULT_MAX_ERROR_RATE, error_budget
from rag_assets.text.markdown import markdown_table


def _latest_golden(store: StoreResource, corpus_version: str):
    golden = store.golden()
    version = golden.latest_version([corpus_version])
    return version, (golden.version_items(version.number) if version else [])


@functools.cache
def build_golden_set_quality(lifecycle: Lifecycle) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        required_resource_keys=lifecycle.resource_keys("store", "golden_policy"),
        asset=lifecycle.key("golden_set"),
        partitions_def=lifecycle.corpus_versions,
        blocking=True,
        automation_condition=WITH_ITS_ASSET,
        description=(
            "Golden-set quality (great-expectations and the project's rules): unique item ids, non-empty "
            "questions, a reference answer on every non-adversarial item, relevant chunks present in the pinned "
            "snapshot with the pinned content, size within [min_items, max_items], required question types present "
            "and no type over max_type_share. Blocks the RAG run on a bad golden set."
        ),
    )
    def golden_set_quality(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        services = lifecycle.services(context)
        store, golden_policy = services.store, services.golden_policy
        corpus_version = context.partition_key
        version, items = _latest_golden(store, corpus_version)
        hashes = {c.chunk_id: c.content_hash for c in store.corpus().snapshot_chunks(corpus_version)}
        policy = GoldenPolicy(golden_policy.min_items, golden_policy.max_items, tuple(golden_policy.required_types),
                              golden_policy.max_type_share)
        report = golden_quality(items, hashes, policy)
        return dg.AssetCheckResult(
            passed=report.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description=(f"golden set v{version.number if version else '-'}: {report.items} items, "
                         f"{len(report.problems)} problem(s){report.named()}"),
            metadata={
                "golden_version": dg.MetadataValue.int(version.number if version else 0),
                "items": dg.MetadataValue.int(report.items),
                "problems": dg.MetadataValue.md(markdown_table(["problem"], [(p,) for p in report.problems])),
            },
        )

    return golden_set_quality


golden_set_quality = build_golden_set_quality(BUNDLED)


@functools.cache
def build_golden_set_pinned(lifecycle: Lifecycle) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        required_resource_keys=lifecycle.resource_keys("store"),
        asset=lifecycle.key("golden_set"),
        partitions_def=lifecycle.corpus_versions,
        blocking=True,
        automation_condition=WITH_ITS_ASSET,
        description="Corpus-version pinning: the golden version and every item in it are pinned to this partition's "
                    "corpus version, so answers and scores downstream refer to one corpus.",
    )
    def golden_set_pinned(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        store = lifecycle.services(context).store
        corpus_version = context.partition_key
        version, items = _latest_golden(store, corpus_version)
        wrong = [i.item_id for i in items if i.corpus_version != corpus_version]
        passed = version is not None and version.corpus_version == corpus_version and not wrong
        return dg.AssetCheckResult(
            passed=passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description="no golden version for this corpus version" if version is None else
            f"{len(wrong)} item(s) pinned elsewhere" if wrong else f"all {len(items)} items pinned to {corpus_version}",
            metadata={"mispinned": dg.MetadataValue.md(markdown_table(["item"], [(w,) for w in wrong]))},
        )

    return golden_set_pinned


golden_set_pinned = build_golden_set_pinned(BUNDLED)


def statements_result(metadata: dict[str, dg.MetadataValue] | None) -> dg.AssetCheckResult:
    """The golden_set_statements verdict on the metadata of the golden set's newest build."""
    shown = {label: value.value for label, value in (metadata or {}).items()}
    failed = int(shown.get(STATEMENTS_FAILED, 0) or 0)
    if metadata is None or "items" not in shown:
        description = "no golden set built: no reference to split"
    elif failed:
        description = (f"{failed} of {shown['items']} items' reference statements could not be extracted (the golden set "
                       "stores none for them; evaluations split them again themselves; the next build of the golden set "
                       "asks them again); first error: "
                       f"{shown.get(STATEMENTS_FIRST_ERROR, 'not recorded')}")
    else:
        description = (f"every reference asked was split into statements ({shown.get('statements_extracted', 0)} "
                       "split in the newest build)")
    return dg.AssetCheckResult(passed=not failed, severity=dg.AssetCheckSeverity.WARN, description=description,
                               metadata={STATEMENTS_FAILED: dg.MetadataValue.int(failed)})


@functools.cache
def build_golden_set_statements(lifecycle: Lifecycle) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=lifecycle.key("golden_set"),
        partitions_def=lifecycle.corpus_versions,
        description="Every reference answer the newest golden-set build asked the judge to split into statements "
                    "(for context recall) was split; a warning naming how many calls failed and the first error when "
                    "some did (a revoked key, an outage): the golden set stores no statements for them (evaluations "
                    "split them again themselves) until its next build, which asks them again.",
    )
    def golden_set_statements(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        record = last_materialization(context.instance, lifecycle.key("golden_set"), context.partition_key)
        return statements_result(record.asset_materialization.metadata if record else None)

    return golden_set_statements


golden_set_statements = build_golden_set_statements(BUNDLED)


@functools.cache
def build_rag_answers_pinned(lifecycle: Lifecycle) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        required_resource_keys=lifecycle.resource_keys("store"),
        asset=lifecycle.key("rag_answers"),
        partitions_def=lifecycle.corpus_versions,
        blocking=True,
        automation_condition=WITH_ITS_ASSET,
        description="Corpus-version pinning of the RAG run: it answered the newest golden version of this corpus version, "
                    "every item has an answer or an error record, and every retrieved chunk id exists in the pinned snapshot.",
    )
    def rag_answers_pinned(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        store = lifecycle.services(context).store
        corpus_version = context.partition_key
        run = store.rag().latest_run(corpus_version)
        golden = store.golden().latest_version([corpus_version])
        problems: list[str] = []
        if run is None or golden is None:
            problems.append("no RAG run or no golden version for this corpus version")
        else:
            if run.golden_version != golden.number:
                problems.append(f"the run answered golden v{run.golden_version}, the newest is v{golden.number}")
            chunk_ids = {c.chunk_id for c in store.corpus().snapshot_chunks(corpus_version)}
            results = {r.item_id: r for r in store.rag().results(run.run_id)}
            missing = set(store.golden().version_members(golden.number)) - set(results)
            if missing:
                problems.append(f"{len(missing)} item(s) have neither an answer nor an error record: {', '.join(sorted(missing)[:10])}")
            for result in results.values():
                unknown = [r.chunk_id for r in result.retrieved if r.chunk_id is not None and r.chunk_id not in chunk_ids]
                if unknown:
                    problems.append(f"item {result.item_id}: retrieved chunk(s) not in {corpus_version}: {', '.join(unknown)}")
                if result.ok and result.answer is None:
                    problems.append(f"item {result.item_id}: no answer and no error")
        return dg.AssetCheckResult(
            passed=not problems, severity=dg.AssetCheckSeverity.ERROR,
            description=f"{len(problems)} problem(s)" if problems else "every item answered or recorded, all chunks pinned",
            metadata={"problems": dg.MetadataValue.md(markdown_table(["problem"], [(p,) for p in problems]))},
        )

    return rag_answers_pinned


rag_answers_pinned = build_rag_answers_pinned(BUNDLED)


class ErrorBudgetConfig(dg.Config):
    """The share of golden items the RAG system may fail on before the run is blocked."""

    max_error_rate: float = DEFAULT_MAX_ERROR_RATE


@functools.cache
def build_rag_answers_error_budget(lifecycle: Lifecycle) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        required_resource_keys=lifecycle.resource_keys("store"),
        asset=lifecycle.key("rag_answers"),
        partitions_def=lifecycle.corpus_versions,
        blocking=True,
        automation_condition=WITH_ITS_ASSET,
        description="Error budget of the RAG run: at most max_error_rate (default 5%) of the items errored (exception, "
                    "timeout, bad response, unknown chunk ids, HTTP error). Fails naming the top error kinds with one "
                    "example each, and so stops a broken system before it is scored.",
    )
    def rag_answers_error_budget(context: dg.AssetCheckExecutionContext, config: ErrorBudgetConfig) -> dg.AssetCheckResult:
        store = lifecycle.services(context).store
        run = store.rag().latest_run(context.partition_key)
        if run is None:
            return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.ERROR,
                                       description="no RAG run for this corpus version")
        try:
            budget = error_budget(store.rag().results(run.run_id), config.max_error_rate)
        except RagAssetsError as exc:
            raise dg.Failure(description=f"invalid error budget: {exc}") from exc
        return dg.AssetCheckResult(
            passed=budget.passed, severity=dg.AssetCheckSeverity.ERROR, description=budget.describe(),
            metadata={
                "error_rate": dg.MetadataValue.float(round(budget.error_rate, 4)),
                "max_error_rate": dg.MetadataValue.float(budget.max_error_rate),
                "errors_by_kind": dg.MetadataValue.md(markdown_table(
                    ["kind", "items", "example item", "example"],
                    [(k.kind, k.items, k.example_item, k.example) for k in budget.kinds])),
            },
        )

    return rag_answers_error_budget


rag_answers_error_budget = build_rag_answers_error_budget(BUNDLED)
