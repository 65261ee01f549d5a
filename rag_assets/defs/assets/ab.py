"""The ab_comparison asset: a candidate RAG system against the current one, on the same golden set."""

import functools

import dagster as dg
from pydantic import Field

from rag_assets.app.ab import ABOutcome, ComparisonImpossible, Contender, compare_contenders
from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.freshness import DECIDED, JUDGE_FAILURES, RAG_ERRORS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.metadata import llm_metadata
from rag_assets.defs.resources import LLM_POOL, RagSystemResource, budget_failure, max_cost_help
from rag_assets.errors import RagAssetsError
from rag_assets.rag.error_budget import DEFAULT_MAX_ERROR_RATE
from rag_assets.ranges import at_least_one, share
from rag_assets.scoring.ab import REJECT
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.gate_settings import check_gate_settings
from rag_assets.scoring.metrics.registry import DEFAULT_K
from rag_assets.defs.assets.evaluation import JUDGE_CODE_VERSION
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE
from rag_assets.settings import current_settings

AB_CHECK = "ab_not_rejected"
#: the recommendation's rules, in the asset's code version: a comparison made under older rules is made again by the
#: next run (2: a side over the RAG error budget, or the judge's, cannot be decided, before any REJECT)
AB_RULES = "ab-rules=2"


class SystemSpec(dg.Config):
    """A RAG system by name: the fields of the ``rag`` resource."""

    name: str
    kind: str = "reference"
    target: str | None = None
    k: int = 5


#: What the bundled demo compares the reference system with when no candidate is named.
DEMO_CANDIDATE = SystemSpec(name="reference-k3", k=3)


class ABConfig(dg.Config):
    """The candidate system to compare with the configured one (the ``rag`` resource), k for the retrieval
    metrics, alpha, the tighter bound on a faithfulness drop, the judge failure budget (per metric and side:
    over it, the comparison cannot be decided and is a REVIEW) and the RAG error budget (per side, the share of items
    a system failed on, as the rag_answers_error_budget check: over it, a REVIEW too), and the most the judge and the reference system's
    LLM may spend in this run (USD; a system of another kind calls its own LLM, which the project does not meter).
    Without a candidate, the reference system is compared with itself at k=3 (the demo) and any other system is
    not compared."""

    candidate: SystemSpec | None = None
    k: int = 5
    alpha: float = 0.05
    faithfulness_bound: float = 0.02
    max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE
    max_rag_error_rate: float = DEFAULT_MAX_ERROR_RATE
    embedder: str = "hashing"
    max_cost_usd: float | None = Field(default=None, description=max_cost_help(
        "the comparison (the judge, and a reference system's LLM; a system of another kind calls its own LLM, "
        "which the project does not meter)"))


def check_config(config: ABConfig) -> None:
    """Fails the step before anything is answered or judged when a setting is out of range: the evaluation's
    gate settings (``check_gate_settings``), the RAG error budget's and the faithfulness drop bound's (a share, as an
    allowed drop: ``rag_assets.ranges.share``; a bound of 7 never rejected) and the candidate's
    k, named ``candidate.k`` (else it failed later as a bare "k must be ..." that did not say which system's)."""
    try:
        check_gate_settings(config.alpha, config.max_judge_failure_rate, k=config.k)
        share("max_rag_error_rate", config.max_rag_error_rate, DEFAULT_MAX_ERROR_RATE)
        share("faithfulness_bound", config.faithfulness_bound, ABConfig.model_fields["faithfulness_bound"].default)
        if config.candidate is not None:
            at_least_one("candidate.k", config.candidate.k, DEFAULT_K)
    except RagAssetsError as exc:
        raise dg.Failure(description=f"invalid ab_comparison config: {exc}") from exc


def contenders(configured: RagSystemResource, named: SystemSpec | None) -> tuple[SystemSpec, SystemSpec] | None:
    """(current, candidate): the configured system and the named candidate; None when there is only one system
    to compare (a team's own system and no candidate named)."""
    default_name = f"reference-k{configured.k}" if configured.kind == "reference" else configured.target
    current = SystemSpec(name=configured.name or default_name or configured.kind, kind=configured.kind,
                         target=configured.target, k=configured.k)
    if named is not None:
        return current, named
    if configured.kind == "reference":
        return current, DEMO_CANDIDATE
    return None


def _skipped(current: RagSystemResource) -> dg.MaterializeResult:
    reason = (f"only one system is configured ({current.name or current.target or current.kind}): name a candidate "
              "in the ab_comparison config to compare it with")
    return dg.MaterializeResult(
        metadata={"recommendation": dg.MetadataValue.text("SKIPPED"), "reason": dg.MetadataValue.text(reason)},
        check_results=[dg.AssetCheckResult(check_name=AB_CHECK, passed=True, severity=dg.AssetCheckSeverity.WARN,
                                           description=f"not applicable: {reason}")])


def _compared(outcome: ABOutcome, current: SystemSpec, candidate: SystemSpec) -> dg.MaterializeResult:
    comparison = outcome.comparison
    overall = {c.metric: c for c in comparison.comparisons if c.scope == "overall"}
    return dg.MaterializeResult(
        metadata={
            "recommendation": dg.MetadataValue.text(comparison.recommendation),
            "current": dg.MetadataValue.text(current.name),
            "candidate": dg.MetadataValue.text(candidate.name),
            "golden_version": dg.MetadataValue.int(outcome.golden_version),
            "comparison": dg.MetadataValue.md(comparison.markdown()),
            **{f"delta_{metric}": dg.MetadataValue.float(c.delta) for metric, c in overall.items()},
            # read by the freshness rule (judged_with_failures): a comparison its failed calls left undecided is
            # made again; one decided within its budgets is not
            RAG_ERRORS: dg.MetadataValue.int(outcome.rag_errors),
            JUDGE_FAILURES: dg.MetadataValue.int(outcome.judge_failures),
            DECIDED: dg.MetadataValue.bool(not comparison.undecided),
            **llm_metadata(outcome.stats),
        },
        check_results=[dg.AssetCheckResult(
            check_name=AB_CHECK, passed=comparison.recommendation != REJECT and not comparison.undecided,
            severity=dg.AssetCheckSeverity.WARN,
            description=f"{comparison.recommendation}: " + "; ".join(comparison.reasons[:3]),
        )],
    )


@functools.cache
def build_ab_comparison(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        required_resource_keys=lifecycle.resource_keys("store", "llm", "rag"),
        # after rag_answers, the configured system's answers: another system (``--system``) compares again or
        # records SKIPPED, instead of an earlier system's comparison standing as the current one's
        **lifecycle.corpus_asset("evaluation", "golden_set", "rag_answers"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        pool=LLM_POOL,
        code_version=lifecycle.counted(lifecycle.generated(lifecycle.judged(f"{JUDGE_CODE_VERSION}+{AB_RULES}"))),
        check_specs=[dg.AssetCheckSpec(
            AB_CHECK, asset=lifecycle.key("ab_comparison"), partitions_def=lifecycle.corpus_versions, description=(
                "The candidate system is not REJECTed against the current one: no significant faithfulness drop beyond "
                "its tighter bound, and not a significant regression on every metric. A REVIEW of regressions a "
                "person weighs passes with a warning; a comparison that cannot be decided fails (a warning, blocking "
                "nothing): a side's judge failed on more than the budget of a metric's items, or a side's RAG system "
                "failed on more than the RAG error budget of the items, whatever the scores say. It is made again by "
                "the next run; one decided despite a few failures within the budgets is not."))],
        description=(
            "A/B comparison of two RAG systems configured by name on the newest golden set of the corpus version: both "
            "answer it and are scored by the same judge; per-metric and per-type deltas with paired permutation tests, "
            "the items where they differ most, and a recommendation: APPROVE, REVIEW or REJECT. Downstream of rag_answers, "
            "so it runs again whenever the configured system's answers do, and made again by the next run while any "
            "answer or judge call behind it failed (metadata errors, judge_failures)."
        ),
    )
    def ab_comparison(context: dg.AssetExecutionContext, config: ABConfig):
        check_config(config)
        services = lifecycle.services(context)
        store, llm, rag, version = services.store, services.llm, services.rag, context.partition_key
        systems = contenders(rag, config.candidate)
        if systems is None:
            yield _skipped(rag)
            return
        journal = store.llm_batches()
        # one budget for every paid call of the asset: a reference system's answers and the judge (a system of
        # another kind calls its own LLM, not this client)
        budget = llm.budget(context.run.run_id, "ab_comparison", config.max_cost_usd, store.llm_spend())

        def contender(spec: SystemSpec, resource: RagSystemResource) -> Contender:
            return Contender(spec.name, lambda snapshot: resource.system(
                version, snapshot, llm.client(journal=journal, budget=budget), store.llm_cache(), store.index_dir()))

        current, candidate = systems
        named = RagSystemResource(kind=candidate.kind, target=candidate.target, name=candidate.name, k=candidate.k)
        try:
            with budget_failure("A/B comparison"):
                outcome = compare_contenders(
                    store, version, contender(current, rag), contender(candidate, named),
                    llm.judge_client(journal=journal, budget=budget), make_embedder(config.embedder), config.k,
                    config.alpha, config.faithfulness_bound, current_settings().evidence_min_overlap,
                    config.max_judge_failure_rate, config.max_rag_error_rate)
        except ComparisonImpossible as exc:
            raise dg.Failure(description=str(exc)) from exc
        yield _compared(outcome, current, candidate)

    return ab_comparison


ab_comparison = build_ab_comparison(BUNDLED)
