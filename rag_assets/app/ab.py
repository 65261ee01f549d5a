"""Two RAG systems on the same golden set, scored by the same judge: the ab_comparison asset's use case."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rag_assets.app.store import Store
from rag_assets.errors import RagAssetsError
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMStats
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.error_budget import DEFAULT_MAX_ERROR_RATE, error_budget
from rag_assets.rag.system import RagSystem, answer_items
from rag_assets.scoring.ab import ABComparison, compare_systems
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import score_answers
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE, Scorecard
from rag_assets.scoring.statements import stated


class ComparisonImpossible(RagAssetsError):
    """No golden set to compare on, or a system that cannot be set up."""


@dataclass(frozen=True)
class Contender:
    """A system by ``name``; ``setup`` makes it over the snapshot (raising RagAssetsError or ValueError)."""

    name: str
    setup: Callable[[SnapshotChunks], RagSystem]


@dataclass(frozen=True)
class ABOutcome:
    """The comparison, and ``stats``: every metered LLM call it made (the reference systems' answers, the judge's
    statement splits and both sides' judging), what its ``llm_*`` metadata shows."""

    golden_version: int
    comparison: ABComparison
    #: the calls that failed behind it, both sides together: the RAG systems' answers and the judge's calls (the
    #: next run compares again while either is not 0: the LLM cache answers the calls that succeeded)
    rag_errors: int = 0
    judge_failures: int = 0
    stats: LLMStats = field(default_factory=LLMStats)


def compare_contenders(store: Store, version: str, current: Contender, candidate: Contender, judge: LLMClient,
                       embedder: Embedder, k: int, alpha: float, faithfulness_bound: float,
                       min_overlap: float, max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE,
                       max_rag_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> ABOutcome:
    """Both systems answer the newest golden set of ``version``; each answer set is scored (judge metrics and
    retrieval metrics at ``k``) and the candidate compared with the current system, item by item. A side whose
    judge failed on more than ``max_judge_failure_rate`` of a metric's items (the evaluation's budget) makes
    the comparison undecidable (REVIEW), never an approval or a rejection; so does a side whose RAG system failed on
    more than ``max_rag_error_rate`` of the items (the rag_answers_error_budget check's rule): an errored answer counts
    at its worst without a judge call, so a revoked key would otherwise read as a regression everywhere."""
    golden = store.golden().latest_version([version])
    if golden is None:
        raise ComparisonImpossible(f"no golden-set version for {version} yet")
    statements = stated(store.golden().version_items(golden.number), judge, store.llm_cache())
    items = statements.items
    chunks = store.corpus().snapshot_chunks(version)
    documents = store.corpus().documents(version)
    snapshot = SnapshotChunks.of(chunks, documents)
    metrics = REGISTRY.names(k=k)
    values, types, budgets, errors = {}, {}, {}, {}
    judge_failures = len(statements.failed)  # the references' splits, asked once for both sides
    # the systems' tallies first, the judge's last: the provider and model shown are then the judge's
    answering, judging = LLMStats(), LLMStats().merge(statements.stats)
    for role, contender in (("current", current), ("candidate", candidate)):
        try:
            system = contender.setup(snapshot)
        except (RagAssetsError, ValueError) as exc:
            raise ComparisonImpossible(f"cannot set up the {role} system {contender.name}: {exc}") from exc
        answered = answer_items(system, items, version, snapshot)
        errors[role] = error_budget(answered, max_rag_error_rate)
        responses = {r.item_id: r for r in answered}
        system_stats = getattr(system, "stats", None)  # a reference system's LLM (another kind is not metered)
        if system_stats is not None:
            answering.merge(system_stats)
        outcome = score_answers(items, responses, chunks, judge, store.llm_cache(), embedder, k,
                                documents=documents, min_overlap=min_overlap)
        judging.merge(outcome.stats)
        values[role], types = Scorecard.build(outcome, metrics).values()
        budgets[role] = outcome.failure_budget(max_judge_failure_rate, metrics)
        judge_failures += outcome.judge_failures
    comparison = compare_systems(values["current"], values["candidate"], types, metrics, alpha,
                                 faithfulness_bound=faithfulness_bound, unjudged=budgets, rag_errors=errors)
    return ABOutcome(golden.number, comparison, sum(e.errors for e in errors.values()), judge_failures,
                     answering.merge(judging))
