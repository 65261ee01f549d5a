"""Golden items and the reference system's answers to them: what the judge scores in tests and benchmarks
that count its calls and tokens at the fake Messages API."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine

from rag_assets.corpus.models import ChunkerConfig, SnapshotChunk
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.generation.generate import run_generation
from rag_assets.generation.models import GenerationConfig
from rag_assets.generation.planning import plan_tasks
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.bm25 import Bm25Index
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagQuery, RagResponse
from rag_assets.rag.reference import ReferenceRagSystem
from rag_assets.rag.system import run_rag
from rag_assets.store.corpus_repository import SqlCorpusRepository

SAMPLE_CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus"


@dataclass(frozen=True)
class JudgeWorld:
    items: list[GoldenItem]
    responses: dict[str, RagResponse]
    versions: dict[str, str | None]  # chunk id -> document version

    @property
    def statements(self) -> dict[str, tuple[str, ...]]:
        return {i.item_id: i.reference_statements for i in self.items}


def _snapshot(engine: Engine, corpus: Path) -> tuple[str, list[SnapshotChunk]]:
    repo = SqlCorpusRepository(engine)
    version = snapshot_corpus(corpus, ChunkerConfig(), repo).version_id
    return version, repo.snapshot_chunks(version)


def judge_world(engine: Engine, items: int, corpus: Path = SAMPLE_CORPUS) -> JudgeWorld:
    """``items`` factual items generated offline from ``corpus`` (reference answer = its one statement),
    answered by the reference system (BM25, k=5, the offline extractive generator)."""
    version, chunks = _snapshot(engine, corpus)
    outcome = run_generation(plan_tasks(chunks, set(), GenerationConfig(max_tasks=items + 10, type_mix={"factual": 1})),
                             OfflineClient(), None, version)
    golden = [GoldenItem(c.candidate_id, 1, c.question_type, c.question, c.reference_answer, c.relevant_chunks, version,
                         reference_statements=(c.reference_answer,)) for c in outcome.candidates][:items]
    return answered(golden, chunks, version)


def synthetic_world(engine: Engine, items: int, corpus: Path) -> JudgeWorld:
    """``items`` synthetic factual items (as bench/scale.py makes them): one per chunk, every n-th chunk of
    ``corpus``, its opening words as the reference, answered by the reference system."""
    version, chunks = _snapshot(engine, corpus)
    picked = chunks[:: max(1, len(chunks) // items)][:items]
    golden = []
    for index, chunk in enumerate(picked):
        words = chunk.text.split()
        reference = " ".join(words[:40])
        golden.append(GoldenItem(f"s{index:05d}", 1, "factual",
                                 f"What does {chunk.title or chunk.path} say about {' '.join(words[:8])}? (#{index})",
                                 reference, (chunk.ref,), version, reference_statements=(reference,)))
    return answered(golden, chunks, version)


def answered(golden: list[GoldenItem], chunks: list[SnapshotChunk], version: str) -> JudgeWorld:
    """The reference system's (BM25, k=5, the offline extractive generator) answers to ``golden``."""
    versions = {c.chunk_id: c.doc_version for c in chunks}
    system = ReferenceRagSystem(Bm25Index.build(chunks), 5, OfflineClient(), None, versions)
    answers = run_rag(system, [RagQuery(i.item_id, i.question, version) for i in golden], SnapshotChunks.of(chunks))
    return JudgeWorld(golden, {r.item_id: r for r in answers}, versions)
