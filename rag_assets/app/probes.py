"""Probe the judge of a corpus version's newest evaluation (see ``rag_assets.scoring.probes``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import ItemScores, judge_calls
from rag_assets.scoring.probes import ProbeResult, probe_sample_size, run_probes, stratified_sample
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.evaluation_repository import SqlEvaluationRepository
from rag_assets.store.golden_repository import SqlGoldenRepository
from rag_assets.store.rag_repository import SqlRagRepository


class ProbeStore(Protocol):
    """What probing reads of the store (the Dagster store resource and the API's store both have it)."""

    def evaluations(self) -> SqlEvaluationRepository: ...
    def rag(self) -> SqlRagRepository: ...
    def golden(self) -> SqlGoldenRepository: ...
    def corpus(self) -> SqlCorpusRepository: ...
    def llm_cache(self) -> LLMCache: ...


@dataclass
class ProbeOutcome:
    """The probes of one evaluation, and what they cost beside it in judge calls."""

    evaluation_id: str
    sample: int
    probe_calls: int
    evaluation_calls: int
    results: list[ProbeResult]

    @property
    def call_share(self) -> float:
        return self.probe_calls / self.evaluation_calls if self.evaluation_calls else 0.0


def probe_evaluation(store: ProbeStore, version: str, judge: LLMClient, embedder: Embedder,
                     wanted: int) -> ProbeOutcome | None:
    """Run every probe on a stratified sample of the newest evaluation of ``version`` (None: there is none),
    with ``embedder`` the evaluation's own, so a probe's scores compare with the evaluation's."""
    history = store.evaluations().history([version], limit=1)
    if not history:
        return None
    evaluation = history[-1]
    rag = store.rag()
    run = rag.run(evaluation.rag_run_id)
    items = store.golden().version_items(run.golden_version)
    chunks = store.corpus().snapshot_chunks(run.corpus_version, rag.chunk_ids(run.run_id) | {
        ref.chunk_id for item in items for ref in item.relevant_chunks})
    responses = {r.item_id: r for r in rag.results(run.run_id, {c.chunk_id: c for c in chunks})}
    versions = {c.path: c.doc_version for c in chunks}
    values, types = store.evaluations().item_values(evaluation.evaluation_id)
    base = {item_id: ItemScores(item_id, revision, types[(item_id, revision)], dict(v))
            for (item_id, revision), v in values.items()}
    evaluation_calls = sum(len(judge_calls(i, responses[i.item_id], versions, i.reference_statements))
                           for i in items if i.item_id in responses and responses[i.item_id].ok)
    size = probe_sample_size(len(items), evaluation_calls, wanted)
    sample = stratified_sample(items, responses, size)
    results, calls = run_probes(sample, responses, base, versions, judge, store.llm_cache(), embedder, evaluation.k)
    return ProbeOutcome(evaluation.evaluation_id, len(sample), calls, evaluation_calls, results)
