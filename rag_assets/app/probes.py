"""Probe the judge of a corpus version's newest evaluation (see ``rag_assets.scoring.probes``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_assets.app.store import Store
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import LLMStats
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import document_versions, judge_calls
from rag_assets.scoring.probes import ProbeResult, probe_sample_size, run_probes, stratified_sample
from rag_assets.scoring.statements import stated


@dataclass
class ProbeOutcome:
    """The probes of one evaluation and their judge calls (``stats``: those sent to the judge told apart from
    those the LLM cache answered), beside ``evaluation_calls``, every judge call the evaluation asks (answered
    from the cache or not, as its own ``llm_calls`` counts them): the figure the sample is sized against."""

    evaluation_id: str
    sample: int
    stats: LLMStats
    evaluation_calls: int
    results: list[ProbeResult]
    statement_stats: LLMStats = field(default_factory=LLMStats)  # the calls splitting the references into statements

    @property
    def spent(self) -> LLMStats:
        """Every judge call of the probes, the statement splits they asked first included: what the asset's
        ``llm_*`` metadata shows (what was sent and billed)."""
        return LLMStats().merge(self.statement_stats).merge(self.stats)

    @property
    def probe_calls(self) -> int:
        """The calls the probes sent to the judge: what they were billed (not those the cache answered, nor those a
        refused key or a spent budget left unsent)."""
        return self.stats.sent

    @property
    def probe_cached(self) -> int:
        """The probe calls the LLM cache answered: nothing sent."""
        return self.stats.cache_hits

    @property
    def call_share(self) -> float:
        """Every call the probes asked of the judge over every call the evaluation asks of it: both counted alike,
        whether the cache answered or not, so the share does not depend on which asset asked a call first (in the
        lifecycle the A/B comparison judges the evaluation's calls before it, which then sends none)."""
        return self.stats.calls / self.evaluation_calls if self.evaluation_calls else 0.0


def probe_evaluation(store: Store, version: str, judge: LLMClient, embedder: Embedder,
                     wanted: int) -> ProbeOutcome | None:
    """Run every probe on a stratified sample of the newest evaluation of ``version`` (None: there is none),
    with ``embedder`` the evaluation's own, so a probe's scores compare with the evaluation's."""
    history = store.evaluations().history([version], limit=1)
    if not history:
        return None
    evaluation = history[-1]
    rag = store.rag()
    run = rag.run(evaluation.rag_run_id)
    statements = stated(store.golden().version_items(run.golden_version), judge, store.llm_cache())
    items = statements.items
    chunks = store.corpus().snapshot_chunks(run.corpus_version, rag.chunk_ids(run.run_id) | {
        ref.chunk_id for item in items for ref in item.relevant_chunks})
    responses = {r.item_id: r for r in rag.results(run.run_id, {c.chunk_id: c for c in chunks})}
    located = {r.span.path for response in responses.values() for r in response.retrieved if r.span is not None}
    versions = document_versions(chunks, store.corpus().documents(run.corpus_version, located))
    values, _ = store.evaluations().item_values(evaluation.evaluation_id)
    base = {item_id: scores for (item_id, _revision), scores in values.items()}
    evaluation_calls = statements.stats.calls + sum(len(judge_calls(i, responses[i.item_id], versions, i.reference_statements))
                                              for i in items if i.item_id in responses and responses[i.item_id].ok)
    size = probe_sample_size(len(items), evaluation_calls, wanted)
    sample = stratified_sample(items, responses, size)
    results, stats = run_probes(sample, responses, base, versions, judge, store.llm_cache(), embedder, evaluation.k)
    return ProbeOutcome(evaluation.evaluation_id, len(sample), stats, evaluation_calls, results, statements.stats)
