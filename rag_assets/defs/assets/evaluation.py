"""The evaluation asset: every metric, aggregates, the gates, the report and a history row."""

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from pydantic import Field

from rag_assets.app.evaluation import (Destinations, EvaluationImpossible, EvaluationRequest, Gating, StoredEvaluation,
                                      evaluate_run, judge_run_items)
from rag_assets.calibration.models import REVIEWED_METRICS, JudgeConfig
from rag_assets.calibration.models import calibration_lines
from rag_assets.console import terminal_progress
from rag_assets.defs.assets.calibration import calibrations, judge_review_metadata
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.assets.probes import last_probe_lines
from rag_assets.defs.automation import EAGER_PAST_CHECKS
from rag_assets.defs.freshness import judged_with_failures
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata, provider_label
from rag_assets.defs.resources import (LLM_POOL, CurationResource, LLMResource, StoreResource, budget_failure,
                                       max_cost_help)
from rag_assets.defs.reuse import INPUTS_TAG, TAG_CHARS, last_materialization, replay
from rag_assets.defs.shards import SHARD_SIZE_HELP, ShardWork, planned, shard_outputs, sharded_asset, step, with_defaults
from rag_assets.errors import RagAssetsError
from rag_assets.llm.client import LLMClient
from rag_assets.llm.offline import code_version
from rag_assets.llm.results import OFFLINE, LLMStats
from rag_assets.report.build import summary_markdown, worst_markdown
from rag_assets.scoring.embedding import Embedder, make_embedder
from rag_assets.scoring.evaluate import SCORING_RULES, EvaluationOutcome, JudgeFailureBudget
from rag_assets.scoring.gate_settings import check_gate_settings
from rag_assets.scoring.judge_prompts import JUDGE_TEMPLATES_REF
from rag_assets.scoring.reuse import fingerprint, item_digest
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE
from rag_assets.scoring.thresholds import load_thresholds, resolve_profile
from rag_assets.settings import current_settings
from rag_assets.store.judged_shard_repository import SqlJudgedShards
from rag_assets.text.markdown import markdown_table

THRESHOLDS_CHECK = "evaluation_thresholds"
REGRESSION_CHECK = "evaluation_regression"
FAILURE_BUDGET_CHECK = "judge_failure_budget"
#: the judge's templates and the rules that turn its answers into figures (not part of a judge configuration: a
#: change of rule leaves a judge's calibration standing)
JUDGE_CODE_VERSION = f"{JUDGE_TEMPLATES_REF}+{SCORING_RULES}"


class EvaluationConfig(dg.Config):
    """k for the retrieval metrics; the threshold profile (auto, general, high_stakes, developer, offline)
    or a file;
    the baseline evaluation id (default: the previous passing one); the regression gate's alpha and
    allowed drops; the judge failure budget; the embedder; the severity of failed gates; golden items
    per judge shard; the most the judge may spend in this run (USD, all shards together); the size of the judge
    review sent to the experts."""

    k: int = 5
    profile: str = "auto"
    thresholds_file: str | None = None
    baseline: str | None = None
    alpha: float = 0.05
    allowed_drops: dict[str, float] = {}
    max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE
    embedder: str = "hashing"
    severity: str = "ERROR"
    shard_size: int = Field(default=250, description=SHARD_SIZE_HELP)
    max_cost_usd: float | None = Field(default=None, description=max_cost_help("the judge"))
    judge_review_sample: int = Field(default=30, ge=0, description=(
        "judged items sent to the experts as a judge review (stratified by question type and, per metric, the "
        "judge's score band: fail, borderline, pass; 0: none)"))


def check_specs(lifecycle: Lifecycle) -> list[dg.AssetCheckSpec]:
    """The evaluation's gates, on this instance's evaluation asset."""
    key, partitions = lifecycle.key("evaluation"), lifecycle.corpus_versions
    return [
        dg.AssetCheckSpec(THRESHOLDS_CHECK, asset=key, blocking=True, partitions_def=partitions, description=(
            "Every metric of the threshold profile (general, high_stakes, developer; offline for the offline judge; "
            "or the user's file) is at or above its minimum.")),
        dg.AssetCheckSpec(REGRESSION_CHECK, asset=key, blocking=True, partitions_def=partitions, description=(
            "Against the baseline (the previous passing evaluation, or a pinned one): no metric, overall or per "
            "question type, dropped by more than its allowed delta with a significant paired permutation test; "
            "a failure names the items that got worse.")),
        dg.AssetCheckSpec(FAILURE_BUDGET_CHECK, asset=key, blocking=True, partitions_def=partitions, description=(
            "For each judge metric, the judge failed (API error or unparseable answer) on at most "
            "max_judge_failure_rate of the items it was asked to score; failed calls are excluded from the means, "
            "never replaced by a default, so failures concentrated on one metric would lift its mean.")),
    ]


class _Judging:
    """The judge, thresholds and embedder a config names; an invalid config (a gate setting out of range too:
    ``check_gate_settings``) fails the step at once, before it reads or writes the store or calls the judge."""

    def __init__(self, config: EvaluationConfig, llm: LLMResource, store: StoreResource, run_id: str) -> None:
        try:
            check_gate_settings(config.alpha, config.max_judge_failure_rate, config.allowed_drops, config.k)
            budget = llm.budget(run_id, "evaluation", config.max_cost_usd, store.llm_spend())
            self.judge: LLMClient = llm.judge_client(journal=store.llm_batches(), budget=budget)
            self.profile = resolve_profile(config.profile, self.judge.provider == OFFLINE)
            self.thresholds = load_thresholds(self.profile, config.thresholds_file, config.k)
            self.embedder: Embedder = make_embedder(config.embedder)
        except (RagAssetsError, ValueError) as exc:
            raise dg.Failure(description=f"invalid evaluation config: {exc}") from exc
        self.config = JudgeConfig.of(self.judge, config.embedder)


@dataclass(frozen=True)
class JudgePlan:
    """What the merge works from: the pinned RAG run, each shard's fingerprint (see
    rag_assets.scoring.reuse), those with a kept outcome (not judged again), and the fingerprint of all the
    merge reads, which its materialization records (tag ``INPUTS_TAG``) so that the next run with the same
    inputs reuses that evaluation."""

    rag_run_id: str
    shards: tuple[str, ...]
    kept: frozenset[str]
    inputs: str

    def outcomes(self, judged: SqlJudgedShards, run_key: str) -> list[EvaluationOutcome]:
        """Every shard's outcome in shard order, from the store: the kept ones (counted as answered by the
        cache) and those this run judged."""
        stored = judged.outcomes(self.shards, run_key)
        missing = [f for f in self.shards if f not in stored]
        if missing:
            raise dg.Failure(description=f"{len(missing)} judge-shard outcomes this run planned to merge are not in "
                                         f"the store (e.g. {missing[0][:12]}): deleted after the plan; run the "
                                         "evaluation again to judge those shards")
        return [stored[f].replayed() if f in self.kept else stored[f] for f in self.shards]


@dataclass(frozen=True)
class JudgeWork(ShardWork):
    """One judge shard's own work: the pinned RAG run and the fingerprint its outcome is kept under."""

    rag_run_id: str
    fingerprint: str


def run_key(context: dg.OpExecutionContext) -> str:
    """The run whose merge reads a shard's outcome: the root of a re-execution reads its parent's shards."""
    return context.run.root_run_id or context.run_id


@step(ins={"after": dg.In(dg.Nothing)},
       out={"plan": dg.Out(JudgePlan), "shards": dg.DynamicOut(JudgeWork)})
def plan_judge_shards(context: dg.OpExecutionContext, config: EvaluationConfig, store: StoreResource,
                      llm: LLMResource):
    """Pins the newest RAG run (every shard scores the same one), splits its golden items into shards and
    runs only the shards without a kept outcome of the same items, answers and judge."""
    version = context.partition_key
    judging = _Judging(config, llm, store, context.run_id)  # a bad config is told first, whatever else is missing
    run = store.rag().latest_run(version)
    if run is None:
        raise dg.Failure(description=f"no RAG run for {version}; materialize rag_answers first")
    responses = {r.item_id: r for r in store.rag().results(run.run_id)}
    digests = [item_digest(item, responses.get(item.item_id))
               for item in store.golden().version_items(run.golden_version)]
    judge = fingerprint(judging.config, code_version(), config.k, version, current_settings().evidence_min_overlap)
    shards = planned(len(digests), config.shard_size)
    fingerprints = tuple(fingerprint(judge, shard.take(digests)) for shard in shards)
    kept = frozenset(store.judged_shards().stored(fingerprints))
    inputs = fingerprint(judge, digests, run.run_id, config.model_dump(exclude={"shard_size"}), judging.thresholds,
                         current_settings().report_url, calibration_lines(calibrations(store).calibration(judging.config),
                                                                  REVIEWED_METRICS))[:TAG_CHARS]
    yield dg.Output(JudgePlan(run.run_id, fingerprints, kept, inputs), output_name="plan",
                    metadata={"shards": dg.MetadataValue.int(len(shards)),
                              "shards_kept": dg.MetadataValue.int(len(kept)),
                              "evaluation_inputs": dg.MetadataValue.text(inputs)})
    yield from shard_outputs(JudgeWork(shard, run.run_id, f) for shard, f in zip(shards, fingerprints) if f not in kept)


@step(code_version=JUDGE_CODE_VERSION, pool=LLM_POOL, out=dg.Out(dg.Nothing))
def judge_shard(context: dg.OpExecutionContext, config: EvaluationConfig, store: StoreResource, llm: LLMResource,
                work: JudgeWork) -> dg.Output:
    """Judges one shard's items; every answer lands in the LLM cache as it arrives, and the outcome is kept
    under the shard's fingerprint, where the merge reads it. Fails before any request when its estimate does
    not fit the budget, and stops sending once the run or the asset spent it."""
    judging = _Judging(config, llm, store, context.run_id)
    with budget_failure("judge"):
        outcome = judge_run_items(store, work.rag_run_id, work.shard.take, judging.judge, judging.embedder, config.k,
                                  terminal_progress("judging"))
    outcome.stats.estimated(judging.judge.last_estimate.cost_usd if judging.judge.last_estimate else 0.0)
    store.judged_shards().keep(work.fingerprint, outcome, run_key(context))
    return dg.Output(None, metadata={"items": dg.MetadataValue.int(len(outcome.items)),
                                        "judge_failures": dg.MetadataValue.int(outcome.judge_failures),
                                        **llm_metadata(outcome.stats)})


@step(ins={"judged": dg.In(dg.Nothing)})
def score_evaluation(context: dg.OpExecutionContext, config: EvaluationConfig, store: StoreResource,
                     llm: LLMResource, curation: CurationResource, plan: JudgePlan):
    """Merges the shards, applies the gates, saves the evaluation and writes the report; or, when all it
    reads is what the partition's last evaluation read, records that one again (``reused_evaluation``).
    Then drops the outcomes with failed judge calls that this run's shards kept for it."""
    yield from _merged(context, config, store, llm, curation, plan)
    store.judged_shards().release(plan.shards, run_key(context))


def _merged(context: dg.OpExecutionContext, config: EvaluationConfig, store: StoreResource, llm: LLMResource,
            curation: CurationResource, plan: JudgePlan):
    version = context.partition_key
    previous = last_materialization(context.instance, context.asset_key, version)
    if previous is not None and _reusable(store, previous.asset_materialization, plan.inputs, version):
        yield from _reuse(context.instance, previous)
        return
    places = Destinations(store.report_dir(), curation.folders().outbox,
                          current_settings().report_url)  # a bad URL stops the step before anything is saved
    judging = _Judging(config, llm, store, context.run_id)
    request = EvaluationRequest(
        version, plan.rag_run_id, config.k, Gating(judging.thresholds, config.max_judge_failure_rate, config.alpha,
                                                   config.allowed_drops),
        judging.config, config.baseline, config.judge_review_sample,
        last_probe_lines(context.instance, context.asset_key, version, judging.config))
    try:
        done = evaluate_run(store, calibrations(store), plan.outcomes(store.judged_shards(), run_key(context)),
                            request, places)
    except EvaluationImpossible as exc:
        raise dg.Failure(description=str(exc)) from exc
    yield dg.Output(None, output_name="result", metadata=_metadata(done, config, judging),
                    data_version=dg.DataVersion(done.evaluation_id), tags={INPUTS_TAG: plan.inputs})
    yield from _checks(done, config)


def _metadata(done: StoredEvaluation, config: EvaluationConfig, judging: _Judging) -> dict[str, dg.MetadataValue]:
    """What the UI shows of a stored evaluation: the worst items first, its run, counts, every metric's mean
    and std, the summary, the judge review, the report and the LLM tally. Means, stds and shares are kept unrounded:
    whoever shows one rounds it once (the CLI, like the report and the gates, to 3 places), where rounding it here
    to 4 places first turned 0.72449 into 0.7245 and then 0.725 in the CLI's summary."""
    card, outcome, run, items = done.assessment.scorecard, done.outcome, done.run, done.items
    floats = {name: dg.MetadataValue.float(agg.mean) for name, agg in card.overall.items() if agg.mean is not None}
    floats.update({f"{name}_std": dg.MetadataValue.float(agg.std)
                   for name, agg in card.overall.items() if agg.std is not None and not math.isnan(agg.std)})
    published = {"report_url": dg.MetadataValue.url(done.published_url)} if done.published_url else {}
    return {
        "worst_items": dg.MetadataValue.md(worst_markdown(done.report, limit=5)),
        **published,
        "evaluation_id": dg.MetadataValue.text(done.evaluation_id),
        "rag_run": dg.MetadataValue.text(run.run_id),
        "system": dg.MetadataValue.text(run.system_name),
        "golden_version": dg.MetadataValue.int(run.golden_version),
        "judge": dg.MetadataValue.text(provider_label(outcome.stats)),
        "items": dg.MetadataValue.int(len(items)),
        "rag_errors": dg.MetadataValue.int(card.rag_errors),
        "contexts_unmapped_share": dg.MetadataValue.float(outcome.contexts_unmapped_share),
        "judge_failures": dg.MetadataValue.int(outcome.judge_failures),
        "judge_failure_rate": dg.MetadataValue.float(outcome.judge_failure_rate),
        "judge_calls_per_item": dg.MetadataValue.float(round(outcome.calls / max(1, len(items)), 2)),
        **{f"claims_{verdict}": dg.MetadataValue.int(count) for verdict, count in card.hallucinations.items()},
        "citations_fabricated": dg.MetadataValue.int(card.fabricated_citations),
        **floats,
        "summary": dg.MetadataValue.md(summary_markdown(card, done.assessment.gates, done.report)),
        **judge_review_metadata(judging.config, done.review, {n: agg.mean for n, agg in card.overall.items()}),
        "report": dg.MetadataValue.path(str(done.report_path)),
        "baseline": dg.MetadataValue.text(done.baseline_id or "none"),
        "thresholds": dg.MetadataValue.text(config.thresholds_file or f"profile {judging.profile}"),
        **llm_metadata(outcome.stats),
    }


def check_severity(name: str) -> dg.AssetCheckSeverity:
    """The severity of a failed gate a config names: WARN, else ERROR (the evaluation's and production_sample's)."""
    return dg.AssetCheckSeverity.WARN if name.upper() == "WARN" else dg.AssetCheckSeverity.ERROR


def _checks(done: StoredEvaluation, config: EvaluationConfig) -> list[dg.AssetCheckResult]:
    """The three gates as the evaluation's checks, each with the table behind it."""
    gates, outcome = done.assessment.gates, done.outcome
    severity = check_severity(config.severity)
    return [
        dg.AssetCheckResult(check_name=THRESHOLDS_CHECK, passed=gates.thresholds_passed, severity=severity,
                            description=gates.thresholds_text(),
                            metadata={"thresholds": dg.MetadataValue.md(gates.thresholds_markdown())}),
        dg.AssetCheckResult(check_name=REGRESSION_CHECK, passed=gates.regression_passed, severity=severity,
                            description=gates.regression_text(),
                            metadata={"regressions": dg.MetadataValue.md(gates.regression_markdown()),
                                      "baseline": dg.MetadataValue.text(gates.baseline_id or "none")}),
        failure_budget_result(gates.judge_budget, outcome, severity, done.assessment.scorecard.failure_rows()),
    ]


def failure_budget_result(budget: JudgeFailureBudget, outcome: EvaluationOutcome, severity: dg.AssetCheckSeverity,
                          failures: Sequence[tuple]) -> dg.AssetCheckResult:
    """The judge_failure_budget check (the evaluation's and production_sample's): its verdict and description, the
    budget per metric and ``failures`` (item, metric, why) as tables."""
    return dg.AssetCheckResult(
        check_name=FAILURE_BUDGET_CHECK, passed=budget.passed, severity=severity,
        description=failure_budget_description(budget, outcome),
        metadata={"per_metric": dg.MetadataValue.md(markdown_table(
            ["metric", "not judged", "items", "rate"], [(m.metric, m.failed, m.items, f"{m.rate:.1%}")
                                                        for m in budget.metrics])),
                  "failures": dg.MetadataValue.md(markdown_table(["item", "metric", "why"], failures))})


def failure_budget_description(budget: JudgeFailureBudget, outcome: EvaluationOutcome) -> str:
    """The judge_failure_budget check's description: the budget per
    metric, the share of all judge calls that failed, and the judge's first error when its failures fail the budget,
    as a failed generation names its own: the counts alone ("55 of 55 items not judged") left a wrong key or a
    refused request to be found in the store."""
    first = budget.first_error
    return (f"{budget.describe()} (all judge calls: {outcome.judge_failure_rate:.1%} failed)"
            + (f"; first error: {first}" if first else ""))


def _reusable(store: StoreResource, previous: dg.AssetMaterialization, inputs: str, version: str) -> bool:
    """The last evaluation read these ``inputs``, none of its judge calls failed (those are judged again, so a
    new evaluation differs), it is still the newest of the lineage (so the baseline and history a new one would
    get are the same) and its report is still there."""
    if previous.tags.get(INPUTS_TAG) != inputs or judged_with_failures(previous):
        return False
    newest = store.evaluations().history(store.corpus().lineage(version), limit=1)
    return (bool(newest) and newest[0].evaluation_id == previous.metadata["evaluation_id"].value
            and newest[0].report_path is not None and Path(newest[0].report_path).is_file())


def _reuse(instance: dg.DagsterInstance, previous: dg.EventLogRecord):
    """The last evaluation recorded again with its checks; its LLM tally says this run made no call."""
    meta = previous.asset_materialization.metadata
    stats = LLMStats(meta["llm_provider"].value, meta["llm_model"].value)
    return replay(instance, previous, "result", {
        **{name: value for name, value in meta.items() if not name.startswith("llm")}, **llm_metadata(stats),
        "reused_evaluation": meta["evaluation_id"]})


@functools.cache
def build_evaluation(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    specs = check_specs(lifecycle)
    return sharded_asset(
        lifecycle,
        name="evaluation",
        upstream="rag_answers",
        config=with_defaults(EvaluationConfig, profile=lifecycle.threshold_profile,
                             thresholds_file=lifecycle.thresholds_file),
        plan=plan_judge_shards,
        shard=judge_shard,
        merge=score_evaluation,
        merge_args={"out": {"result": dg.Out(dg.Nothing),
                            **{spec.get_python_identifier(): dg.Out(dg.Nothing, is_required=False) for spec in specs}}},
        group_name=lifecycle.named("evaluation"),
        owners=OWNERS,
        kinds={"python", "anthropic", "html"},
        code_version=lifecycle.counted(lifecycle.judged(JUDGE_CODE_VERSION)),
        automation_condition=EAGER_PAST_CHECKS,
        check_specs=specs,
        description=(
            "Scores of the newest RAG run: retrieval metrics from the golden labels (precision, recall, nDCG, MRR, hit "
            "rate at k, average precision) and judge metrics (faithfulness with hallucination types, answer relevance, "
            "context precision and recall, citation accuracy, temporal faithfulness, decline accuracy), per item and "
            "aggregated overall and per question type, with the threshold, regression and judge-failure gates, a "
            "markdown summary, an HTML report with plots, a history row, and a judge review for the experts in the "
            "curation outbox (see judge_calibration). The golden items are judged in shards "
            "(shard_size), one step each, merged by score_evaluation."
        ),
    )


evaluation = build_evaluation(BUNDLED)
