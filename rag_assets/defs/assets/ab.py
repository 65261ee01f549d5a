"""The ab_comparison asset: a candidate RAG system against the current one, on the same golden set."""

import functools

import dagster as dg

from rag_assets.defs.assets.corpus import OWNERS
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.resources import LLM_POOL, LLMResource, RagSystemResource, StoreResource
from rag_assets.errors import RagAssetsError
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.system import answer_items
from rag_assets.scoring.ab import REJECT, compare_systems
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.evaluate import JUDGE_METRICS, retrieval_metric_names, score_answers
from rag_assets.scoring.scorecard import Scorecard
from rag_assets.settings import current_settings

AB_CHECK = "ab_not_rejected"


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
    metrics, alpha, and the tighter bound on a faithfulness drop. Without a candidate, the reference system is
    compared with itself at k=3 (the demo) and any other system is not compared."""

    candidate: SystemSpec | None = None
    k: int = 5
    alpha: float = 0.05
    faithfulness_bound: float = 0.02
    embedder: str = "hashing"


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


@functools.cache
def build_ab_comparison(lifecycle: Lifecycle) -> dg.AssetsDefinition:
    @dg.asset(
        **lifecycle.corpus_asset("evaluation", "golden_set"),
        owners=OWNERS,
        kinds={"python", "anthropic"},
        pool=LLM_POOL,
        check_specs=[dg.AssetCheckSpec(
            AB_CHECK, asset=lifecycle.key("ab_comparison"), partitions_def=lifecycle.corpus_versions, description=(
                "The candidate system is not REJECTed against the current one: no significant faithfulness drop beyond "
                "its tighter bound, and not a significant regression on every metric. REVIEW passes with a warning."))],
        description=(
            "A/B comparison of two RAG systems configured by name on the newest golden set of the corpus version: both "
            "answer it and are scored by the same judge; per-metric and per-type deltas with paired permutation tests, "
            "the items where they differ most, and a recommendation: APPROVE, REVIEW or REJECT."
        ),
    )
    @lifecycle.keyed
    def ab_comparison(context: dg.AssetExecutionContext, config: ABConfig, store: StoreResource, llm: LLMResource,
                      rag: RagSystemResource):
        systems = contenders(rag, config.candidate)
        if systems is None:
            yield _skipped(rag)
            return
        version = context.partition_key
        golden = store.golden().latest_version([version])
        if golden is None:
            raise dg.Failure(description=f"no golden-set version for {version} yet")
        items = store.golden().version_items(golden.number)
        chunks = store.corpus().snapshot_chunks(version)
        documents = store.corpus().documents(version)
        snapshot = SnapshotChunks.of(chunks, documents)
        metrics = (*JUDGE_METRICS, *retrieval_metric_names(config.k))
        journal = store.llm_batches()
        judge, embedder = llm.judge_client(journal=journal), make_embedder(config.embedder)
        values = {}
        for role, spec in zip(("current", "candidate"), systems):
            resource = rag if role == "current" else RagSystemResource(kind=spec.kind, target=spec.target,
                                                                        name=spec.name, k=spec.k)
            try:
                system = resource.system(version, snapshot, llm.client(journal=journal), store.llm_cache(), store.index_dir())
            except (RagAssetsError, ValueError) as exc:
                raise dg.Failure(description=f"cannot set up the {role} system {spec.name}: {exc}") from exc
            responses = {r.item_id: r for r in answer_items(system, items, version, snapshot)}
            outcome = score_answers(items, responses, chunks, judge, store.llm_cache(), embedder, config.k,
                                    documents=documents, min_overlap=current_settings().evidence_min_overlap)
            values[role], types = Scorecard.build(outcome, metrics).values()
        comparison = compare_systems(values["current"], values["candidate"], types, metrics, config.alpha,
                                     faithfulness_bound=config.faithfulness_bound)
        overall = {c.metric: c for c in comparison.comparisons if c.scope == "overall"}
        yield dg.MaterializeResult(
            metadata={
                "recommendation": dg.MetadataValue.text(comparison.recommendation),
                "current": dg.MetadataValue.text(systems[0].name),
                "candidate": dg.MetadataValue.text(systems[1].name),
                "golden_version": dg.MetadataValue.int(golden.number),
                "comparison": dg.MetadataValue.md(comparison.markdown()),
                **{f"delta_{metric}": dg.MetadataValue.float(round(c.delta, 4)) for metric, c in overall.items()},
            },
            check_results=[dg.AssetCheckResult(
                check_name=AB_CHECK, passed=comparison.recommendation != REJECT,
                severity=dg.AssetCheckSeverity.WARN,
                description=f"{comparison.recommendation}: " + "; ".join(comparison.reasons[:3]),
            )],
        )

    return ab_comparison


ab_comparison = build_ab_comparison(BUNDLED)
