"""The judge_probes asset: the judge of every evaluation tested on answers changed in known ways."""

import functools
import math

import dagster as dg

from rag_assets.app.probes import ProbeOutcome, probe_evaluation
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.automation import EAGER_PAST_CHECKS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.resources import LLM_POOL, LLMResource, StoreResource
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.probes import DEFAULT_MIN_PASS_RATE, DEFAULT_SAMPLE, PROBES, probe_verdict
from rag_assets.settings import Settings
from rag_assets.text.markdown import markdown_table

PROBES_CHECK = "judge_probes"


class ProbeConfig(dg.Config):
    """The embedder of the evaluation being probed: answer relevance is compared with its own figures."""

    embedder: str = "hashing"


def _metadata(outcome: ProbeOutcome) -> dict[str, dg.MetadataValue]:
    rows = [[r.name, r.metric, r.expect, r.tested, r.passed, "n/a" if math.isnan(r.pass_rate) else f"{r.pass_rate:.3f}"]
            for r in outcome.results]
    return {
        "evaluation_id": dg.MetadataValue.text(outcome.evaluation_id),
        "items_probed": dg.MetadataValue.int(outcome.sample),
        "probe_calls": dg.MetadataValue.int(outcome.probe_calls),
        "share_of_evaluation_calls": dg.MetadataValue.float(round(outcome.call_share, 4)),
        **{f"pass_rate/{r.name}": dg.MetadataValue.float(r.pass_rate) for r in outcome.results if r.tested},
        "probes": dg.MetadataValue.md(markdown_table(["probe", "metric", "must", "tested", "passed", "pass rate"], rows)),
    }


@functools.cache
def build_judge_probes(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        **lifecycle.corpus_asset("evaluation", "evaluation"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        pool=LLM_POOL,
        automation_condition=EAGER_PAST_CHECKS,
        check_specs=[dg.AssetCheckSpec(
            PROBES_CHECK, asset=lifecycle.key("judge_probes"), partitions_def=lifecycle.corpus_versions,
            description="Every probe the judge could be tested on reaches the minimum pass rate "
                        "(RAG_ASSETS_PROBE_MIN_PASS_RATE, default 0.9).")],
        description=(
            "The judge of the newest evaluation, tested: a stratified sample of its items (RAG_ASSETS_PROBE_SAMPLE, "
            f"default {DEFAULT_SAMPLE}; fewer when the probes would cost over 15% of the evaluation's judge calls) "
            f"judged again after known changes: {', '.join(p.name for p in PROBES)}. Each probe's pass rate is "
            "metadata the UI plots over time."),
    )
    @lifecycle.keyed
    def judge_probes(context: dg.AssetExecutionContext, config: ProbeConfig, store: StoreResource, llm: LLMResource):
        wanted, min_pass_rate = Settings.probe_sample(), Settings.probe_min_pass_rate()
        outcome = probe_evaluation(store, context.partition_key, llm.judge_client(journal=store.llm_batches()),
                                   make_embedder(config.embedder), DEFAULT_SAMPLE if wanted is None else wanted)
        if outcome is None:
            raise dg.Failure(description=f"no evaluation of {context.partition_key} to probe yet")
        passed, description = probe_verdict(outcome.results,
                                            DEFAULT_MIN_PASS_RATE if min_pass_rate is None else min_pass_rate)
        yield dg.MaterializeResult(metadata=_metadata(outcome))
        yield dg.AssetCheckResult(check_name=PROBES_CHECK, passed=passed, severity=dg.AssetCheckSeverity.WARN,
                                  description=description)

    return judge_probes


judge_probes = build_judge_probes(BUNDLED)
