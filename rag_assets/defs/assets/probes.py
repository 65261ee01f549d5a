"""The judge_probes asset: the judge of every evaluation tested on answers changed in known ways."""

import functools
import math

import dagster as dg
from pydantic import Field

from rag_assets.app.probes import ProbeOutcome, probe_evaluation
from rag_assets.calibration.models import JudgeConfig
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.automation import EAGER_PAST_CHECKS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.resources import LLM_POOL, budget_failure, max_cost_help
from rag_assets.defs.reuse import last_materialization
from rag_assets.llm.client import LLMClient
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.probes import (CAPPED_FROM, DEFAULT_MIN_PASS_RATE, DEFAULT_SAMPLE, MAX_SHARE, MIN_SAMPLE,
                                       PROBES, ProbeSettings, no_probe_lines, probe_lines, probe_verdict,
                                       self_preference)
from rag_assets.settings import current_settings
from rag_assets.text.markdown import markdown_table

PROBES_CHECK = "judge_probes"
PASS_RATE = "pass_rate/"  # + the probe's name: a metadata label the UI plots
SELF_PREFERENCE_CHECK = "judge_self_preference"
#: The assets whose text an LLM may have written, and the metadata naming its model.
GENERATORS = ("question_candidates", "rag_answers")
#: The metadata label of the probes' judge configuration (``JudgeConfig.key``): the evaluation's report shows only
#: probes of its own judge.
JUDGE_CONFIG = "judge_config"
#: How many of a partition's newest judge_probes materializations the report looks through for its judge's.
PROBES_LOOKED_AT = 20


class ProbeConfig(dg.Config):
    """The embedder of the evaluation being probed: answer relevance is compared with its own figures; the most the
    probes' judge may spend in this run (USD)."""

    embedder: str = "hashing"
    max_cost_usd: float | None = Field(default=None, description=max_cost_help("the probes' judge"))


def _metadata(outcome: ProbeOutcome, judge: JudgeConfig) -> dict[str, dg.MetadataValue]:
    """The probes' judge, pass rates (a failed judge call counted as a miss) and judge calls: those sent to the
    judge and those the LLM cache answered, those that failed, and the share of the evaluation's judge calls they
    add, both sides counted alike (every call asked of the judge, answered from the cache or not, as the
    evaluation's own ``llm_calls`` counts them)."""
    rows = [[r.name, r.metric, r.expect, r.tested, r.judge_failures, r.passed,
             "n/a" if math.isnan(r.pass_rate) else f"{r.pass_rate:.3f}"] for r in outcome.results]
    return {
        "evaluation_id": dg.MetadataValue.text(outcome.evaluation_id),
        "judge": dg.MetadataValue.text(judge.label()),
        JUDGE_CONFIG: dg.MetadataValue.text(judge.key),
        "items_probed": dg.MetadataValue.int(outcome.sample),
        "probe_calls": dg.MetadataValue.int(outcome.probe_calls),
        "probe_cached": dg.MetadataValue.int(outcome.probe_cached),
        "evaluation_judge_calls": dg.MetadataValue.int(outcome.evaluation_calls),
        "share_of_evaluation_calls": dg.MetadataValue.float(round(outcome.call_share, 4)),
        "probe_judge_failures": dg.MetadataValue.int(sum(r.judge_failures for r in outcome.results)),
        **{f"{PASS_RATE}{r.name}": dg.MetadataValue.float(r.pass_rate) for r in outcome.results if r.probed},
        "probes": dg.MetadataValue.md(markdown_table(
            ["probe", "metric", "must", "tested", "judge failures", "passed", "pass rate"], rows)),
        **llm_metadata(outcome.spent),
    }


def last_probe_lines(instance: dg.DagsterInstance, evaluation: dg.AssetKey, partition: str,
                     judge: JudgeConfig) -> dict[str, str]:
    """Per metric its probes' pass rates from the newest judge_probes of ``partition`` beside ``evaluation`` that
    probed ``judge`` (the configuration of the evaluation whose report shows them), for the report (see
    ``probe_lines``); another judge's probes, or probes that recorded no judge, say nothing about it: then each
    metric's line says none ran yet."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey([*evaluation.path[:-1], "judge_probes"]),
                              asset_partitions=[partition]), limit=PROBES_LOOKED_AT).records
    for record in records:
        shown = record.asset_materialization.metadata
        probed = shown.get(JUDGE_CONFIG)
        if probed is not None and probed.value == judge.key:
            rates = {label[len(PASS_RATE):]: float(value.value) for label, value in shown.items()
                     if label.startswith(PASS_RATE)}
            return probe_lines(rates, str(shown["evaluation_id"].value))
    return no_probe_lines(f"{judge.provider} / {judge.model}")


def _probe_settings() -> ProbeSettings:
    """The probe settings of this process (RAG_ASSETS_PROBE_SAMPLE, RAG_ASSETS_PROBE_MIN_PASS_RATE)."""
    sample, min_pass_rate = current_settings().probe_sample, current_settings().probe_min_pass_rate
    return ProbeSettings(DEFAULT_SAMPLE if sample is None else sample,
                         DEFAULT_MIN_PASS_RATE if min_pass_rate is None else min_pass_rate)


def _self_preference(context: dg.AssetExecutionContext, lifecycle: Lifecycle, judge: LLMClient) -> dg.AssetCheckResult:
    """The self-preference check, from the models the generating assets' newest materializations name."""
    generators = {}
    for name in GENERATORS:
        record = last_materialization(context.instance, lifecycle.key(name), context.partition_key)
        model = record.asset_materialization.metadata.get("llm_model") if record else None
        generators[name] = None if model is None else str(model.value)
    same = self_preference(judge.provider, judge.model, generators)
    return dg.AssetCheckResult(
        check_name=SELF_PREFERENCE_CHECK, passed=not same, severity=dg.AssetCheckSeverity.WARN,
        description=(f"the judge's model {judge.model} also wrote {' and '.join(same)}: its figures there may favour "
                     "its own writing; set another judge_model" if same else
                     f"the judge ({judge.provider} / {judge.model}) wrote none of what it judges"))


def build_judge_probes(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    """The judge_probes asset of ``lifecycle`` under this process's probe settings."""
    return _judge_probes(lifecycle, _probe_settings())


@functools.cache
def _judge_probes(lifecycle: Lifecycle, settings: ProbeSettings) -> dg.AssetsDefinition:
    """The asset runs with ``settings``, and their version is its code version: Dagster (and ``rag-assets run``)
    then call a materialization under other settings or other probes stale, so it is probed again rather than
    shown as current."""

    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "llm"),
        **lifecycle.corpus_asset("evaluation", "evaluation"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        pool=LLM_POOL,
        code_version=lifecycle.judged(settings.version),
        automation_condition=EAGER_PAST_CHECKS,
        check_specs=[dg.AssetCheckSpec(
            PROBES_CHECK, asset=lifecycle.key("judge_probes"), partitions_def=lifecycle.corpus_versions,
            description="Every probe the judge could be tested on reaches the minimum pass rate "
                        "(RAG_ASSETS_PROBE_MIN_PASS_RATE, default 0.9); a failed judge call counts as a miss."),
            dg.AssetCheckSpec(
                SELF_PREFERENCE_CHECK, asset=lifecycle.key("judge_probes"), partitions_def=lifecycle.corpus_versions,
                description="The judge's model did not write the questions or the answers it judges (an LLM judge "
                            "tends to prefer its own writing); a warning when it did.")],
        description=(
            "The judge of the newest evaluation, tested: a stratified sample of its items (RAG_ASSETS_PROBE_SAMPLE, "
            f"default {DEFAULT_SAMPLE}; fewer when the probes would cost over {MAX_SHARE:.0%} of the evaluation's "
            f"judge calls, never fewer than {MIN_SAMPLE} below {CAPPED_FROM} items) judged again after known "
            f"changes: {', '.join(p.name for p in PROBES)}. Each probe's pass rate is metadata the UI plots over "
            "time."),
    )
    def judge_probes(context: dg.AssetExecutionContext, config: ProbeConfig):
        services = lifecycle.services(context)
        store, llm = services.store, services.llm
        budget = llm.budget(context.run.run_id, "judge_probes", config.max_cost_usd, store.llm_spend())
        judge = llm.judge_client(journal=store.llm_batches(), budget=budget)
        with budget_failure("judge"):
            outcome = probe_evaluation(store, context.partition_key, judge, make_embedder(config.embedder),
                                       settings.sample)
        if outcome is None:
            raise dg.Failure(description=f"no evaluation of {context.partition_key} to probe yet")
        passed, description = probe_verdict(outcome.results, settings.min_pass_rate)
        yield dg.MaterializeResult(metadata=_metadata(outcome, JudgeConfig.of(judge, config.embedder)))
        yield dg.AssetCheckResult(check_name=PROBES_CHECK, passed=passed, severity=dg.AssetCheckSeverity.WARN,
                                  description=description)
        yield _self_preference(context, lifecycle, judge)

    return judge_probes


judge_probes = build_judge_probes(BUNDLED)
