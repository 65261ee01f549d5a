"""The production_sample asset: one day of served queries, sampled, judged, and watched for drift."""

import functools
from datetime import date
from pathlib import Path

import dagster as dg
from pydantic import Field

from rag_assets.app.production import DEFAULT_ALLOWED_DROP, DayPolicy, ProductionDayOutcome, score_production_day
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.assets.evaluation import FAILURE_BUDGET_CHECK, check_severity, failure_budget_result
from rag_assets.defs.freshness import JUDGE_FAILURES
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata, provider_label
from rag_assets.defs.resources import LLM_POOL, budget_failure, max_cost_help
from rag_assets.errors import RagAssetsError
from rag_assets.production.drift import DriftResult
from rag_assets.production.scoring import PRODUCTION_METRICS
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.gate_settings import check_gate_settings
from rag_assets.scoring.judge_prompts import JUDGE_TEMPLATES_REF
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE
from rag_assets.store.production_repository import ProductionDay
from rag_assets.text.markdown import markdown_table


def drift_check_name(metric: str) -> str:
    return f"drift_{metric}"


class ProductionSampleConfig(dg.Config):
    """Sample size per day; how many previous days form the drift baseline; the drop each metric may take
    before an alert (beyond the noise of the sample, which is always required too); the test's alpha; the
    similarity under which a production question is a coverage gap, and whether gaps go to the curation queue; the
    most the judge may spend on the day in this run (USD); the judge failure budget and the severity of its failed
    check, as the evaluation's."""

    sample_size: int = 30
    baseline_days: int = 7
    allowed_drops: dict[str, float] = {metric: DEFAULT_ALLOWED_DROP for metric in PRODUCTION_METRICS}
    alpha: float = 0.05
    coverage_threshold: float = 0.35
    queue_coverage_gaps: bool = True
    embedder: str = "hashing"
    max_cost_usd: float | None = Field(default=None, description=max_cost_help("the judge"))
    max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE
    severity: str = "ERROR"


def _checks(lifecycle: Lifecycle) -> list[dg.AssetCheckSpec]:
    return [dg.AssetCheckSpec(
        FAILURE_BUDGET_CHECK, asset=lifecycle.key("production_sample"), blocking=True,
        partitions_def=lifecycle.production_days, description=(
            "As the evaluation's: for each production metric, the judge failed (API error or unparseable answer) on "
            "at most max_judge_failure_rate of the day's sampled items; failed calls are left out of the means, never "
            "replaced by a default, so a day judged during an outage would show the means of the few items judged. "
            "A day whose judge calls failed is scored again by the next `rag-assets run` (only the failed calls are "
            "sent); the log sensor requests a day again only when its log records change.")),
        *_drift_checks(lifecycle)]


def _failure_budget_result(scored: ProductionDayOutcome, config: ProductionSampleConfig) -> dg.AssetCheckResult:
    return failure_budget_result(scored.outcome.failure_budget(config.max_judge_failure_rate, PRODUCTION_METRICS),
                                 scored.outcome, check_severity(config.severity), scored.card.failure_rows()[:50])


def _drift_checks(lifecycle: Lifecycle) -> list[dg.AssetCheckSpec]:
    return [dg.AssetCheckSpec(drift_check_name(metric), asset=lifecycle.key("production_sample"),
                              partitions_def=lifecycle.production_days,
                              description=(
                                  f"The day's mean {metric} did not drop below the previous days' by more than its "
                                  "allowed delta AND more than the minimum detectable difference for the day's sample "
                                  "size (t x sigma x sqrt(2/N)); an alert names the likely cause and the first action."))
            for metric in PRODUCTION_METRICS]


#: Metrics judged against the served answer: a wrong answer lowers them too, so faithfulness explains them first.
ANSWER_JUDGED = ("context_precision", "citation_accuracy")


def _missing_note(missing: list[date]) -> str:
    """The logged days the baseline lacks because they were not scored (yet): said, never left out silently."""
    if not missing:
        return ""
    return f" (without {', '.join(d.isoformat() for d in missing)}: logged, not scored yet)"


def _drift_description(result: DriftResult, allowed: float, baseline_days: int, faithfulness_alert: bool,
                       missing: list[date]) -> str:
    if result.baseline_mean is None or result.today_mean is None:
        return (f"{result.metric}: no comparison (needs scored values on previous days and today)"
                f"{_missing_note(missing)}")
    head = (f"{result.metric}: {result.today_mean:.3f} today vs {result.baseline_mean:.3f} over the previous "
            f"{baseline_days} days{_missing_note(missing)} (drop {result.drop:+.3f}; minimum detectable difference "
            f"{result.mdd:.3f} at n={result.n}; allowed {allowed:.3f})")
    if result.alert:
        cause, action = result.diagnosis or ("unknown", "inspect the day's lowest-scoring answers")
        text = f"DRIFT {head}. Likely cause: {cause}. First action: {action}."
        if faithfulness_alert and result.metric in ANSWER_JUDGED:
            text += (" Faithfulness dropped on the same day and this metric is judged against the served answer, "
                     "so look at the faithfulness alert first.")
        return text
    if result.drop > allowed:
        return f"{head}: the drop is within the noise of this sample size, so no alert"
    return head


def _drift_result(result: DriftResult, allowed: float, baseline_days: int, faithfulness_alert: bool,
                  missing: list[date]) -> dg.AssetCheckResult:
    metadata = {"drop": dg.MetadataValue.float(round(result.drop, 4)),
                "minimum_detectable_difference": dg.MetadataValue.float(round(result.mdd, 4)) if result.mdd != float("inf")
                else dg.MetadataValue.text("inf (too few values)"),
                "n": dg.MetadataValue.int(result.n),
                "allowed_drop": dg.MetadataValue.float(allowed),
                "beyond_noise": dg.MetadataValue.bool(result.beyond_noise)}
    if result.baseline_mean is not None:
        metadata["baseline_mean"] = dg.MetadataValue.float(round(result.baseline_mean, 4))
    if result.diagnosis:
        metadata["likely_cause"], metadata["first_action"] = map(dg.MetadataValue.text, result.diagnosis)
    if missing:
        metadata["baseline_days_not_scored"] = dg.MetadataValue.text(", ".join(d.isoformat() for d in missing))
    return dg.AssetCheckResult(check_name=drift_check_name(result.metric), passed=not result.alert,
                               description=_drift_description(result, allowed, baseline_days, faithfulness_alert,
                                                              missing),
                               metadata=metadata)


def _history_table(previous: list[ProductionDay], today: date, means: dict[str, float | None], n: int) -> str:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    rows = [(d.day.isoformat(), d.sample_size, *(cell(d.aggregates.get(m, {}).get("mean")) for m in PRODUCTION_METRICS))
            for d in previous]
    rows.append((f"**{today.isoformat()}**", n, *(cell(means[m]) for m in PRODUCTION_METRICS)))
    return markdown_table(["day", "sampled", *PRODUCTION_METRICS], rows)


def _coverage_metadata(scored: ProductionDayOutcome) -> dict[str, dg.MetadataValue]:
    """The day's coverage gaps and queued candidates; with no golden set yet, why there are none."""
    if scored.coverage_version is None:
        return {"coverage": dg.MetadataValue.text(
            "not measured: no golden set exists yet, so no coverage gap is counted or queued; the day is scored "
            "again once one exists")}
    gaps = scored.gaps
    return {
        "coverage_gaps": dg.MetadataValue.int(len(gaps)),
        "coverage_gap_list": dg.MetadataValue.md(markdown_table(
            ["query", "question", "closest golden item", "similarity"],
            [(g.query_id, g.question, g.best_item_id or "-", f"{g.similarity:.2f}") for g in gaps[:50]])),
        "queued_candidates": dg.MetadataValue.int(scored.queued),
        "queued_for_corpus_version": dg.MetadataValue.text(scored.queued_version or "none"),
    }


def _day_metadata(scored: ProductionDayOutcome, folder: Path) -> dict[str, dg.MetadataValue]:
    read, card, means = scored.read, scored.card, scored.means
    return {
        "day": dg.MetadataValue.text(scored.day.isoformat()),
        "production_run": dg.MetadataValue.text(scored.run_id),
        "log_folder": dg.MetadataValue.path(str(folder)),
        "records": dg.MetadataValue.int(len(read.records)),
        "sample_size": dg.MetadataValue.int(scored.sample_size),
        "no_answer": dg.MetadataValue.int(card.rag_errors),
        "bad_lines": dg.MetadataValue.int(len(read.bad_lines)),
        "bad_line_details": dg.MetadataValue.md(markdown_table(
            ["file", "line", "problem"], [(b.file, b.line, b.reason) for b in read.bad_lines[:50]])),
        **{m: dg.MetadataValue.float(v) for m, v in means.items() if v is not None},
        **{f"{m}_failures": dg.MetadataValue.int(card.overall[m].failures) for m in PRODUCTION_METRICS},
        JUDGE_FAILURES: dg.MetadataValue.int(scored.outcome.judge_failures),
        "judge_failure_rate": dg.MetadataValue.float(scored.outcome.judge_failure_rate),
        **{f"claims_{verdict}": dg.MetadataValue.int(count) for verdict, count in card.hallucinations.items()},
        "citations_fabricated": dg.MetadataValue.int(card.fabricated_citations),
        "drift_alerts": dg.MetadataValue.int(sum(1 for r in scored.drift.values() if r.alert)),
        "previous_days": dg.MetadataValue.md(_history_table(scored.previous, scored.day, means, scored.sample_size)),
        **_coverage_metadata(scored),
        "judge": dg.MetadataValue.text(provider_label(scored.outcome.stats)),
        **llm_metadata(scored.outcome.stats),
    }


def production_code_version(lifecycle: Lifecycle) -> str:
    """production_sample's code version: the judge prompts' and the instance's judge (``Lifecycle.judged``); a day
    scored under another counts as not scored (``freshness.already_scored``)."""
    return lifecycle.judged(JUDGE_TEMPLATES_REF)


@functools.cache
def build_production_sample(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "llm", "corpus", "production_logs", "curation"),
        key_prefix=lifecycle.key_prefix,
        partitions_def=lifecycle.production_days,
        group_name=lifecycle.named("production"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        code_version=production_code_version(lifecycle),
        pool=LLM_POOL,
        check_specs=_checks(lifecycle),
        description=(
            "One day of production traffic from the query logs: a reproducible random sample (seeded by the day) "
            "scored with the reference-free metrics (faithfulness with hallucination types, answer relevance, context "
            "precision, citation accuracy) by the evaluation's judge and cache; compared with the previous days by "
            "drift checks that account for the sample's noise; production questions no golden item resembles are "
            "listed as coverage gaps and queued as review candidates, written into the experts' review files at once."
        ),
    )
    def production_sample(context: dg.AssetExecutionContext, config: ProductionSampleConfig):
        services = lifecycle.services(context)
        store, llm = services.store, services.llm
        budget = llm.budget(context.run.run_id, "production_sample", config.max_cost_usd, store.llm_spend())
        try:
            check_gate_settings(config.alpha, config.max_judge_failure_rate, config.allowed_drops,
                                production=PRODUCTION_METRICS)
            judge = llm.judge_client(journal=store.llm_batches(), budget=budget)
            embedder = make_embedder(config.embedder)
        except (RagAssetsError, ValueError) as exc:
            raise dg.Failure(description=f"invalid production_sample config: {exc}") from exc
        policy = DayPolicy(config.sample_size, config.baseline_days, config.allowed_drops, config.alpha,
                           config.coverage_threshold, config.queue_coverage_gaps)
        folder = services.production_logs.folder()
        with budget_failure("judge"):
            scored = score_production_day(store, date.fromisoformat(context.partition_key), folder, judge, embedder,
                                          services.corpus.resolved_root(), policy, services.curation.folders().outbox)
        for bad in scored.read.bad_lines:
            context.log.warning(f"skipped {bad.file} line {bad.line}: {bad.reason}")
        faithfulness_alert = scored.drift["faithfulness"].alert
        yield dg.MaterializeResult(
            metadata=_day_metadata(scored, folder),
            check_results=[_failure_budget_result(scored, config), *(
                _drift_result(scored.drift[m], policy.allowed_drop(m), policy.baseline_days, faithfulness_alert,
                              scored.baseline_missing) for m in PRODUCTION_METRICS)],
            data_version=dg.DataVersion(scored.data_version),
        )

    return production_sample


production_sample = build_production_sample(BUNDLED)
