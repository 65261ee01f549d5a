"""A shard's reads: only its items, their RAG results and the snapshot chunks those name, exactly as the
whole-set reads give them."""

from __future__ import annotations

from pathlib import Path

from rag_assets.evidence.spans import Span
from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.golden.build import build_golden, diff_golden
from rag_assets.golden.repin import PinTarget
from rag_assets.rag.models import RagResponse, RetrievedChunk, failed
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine, write_transaction
from rag_assets.store.golden_repository import SqlGoldenRepository, add_revision
from rag_assets.store.rag_repository import SqlRagRepository


def test_a_snapshot_gives_the_named_chunks_it_holds_in_id_order(store_url: str, sample_corpus: Path):
    corpus = SqlCorpusRepository(get_engine(store_url))
    version = snapshot_corpus(sample_corpus, ChunkerConfig(), corpus).version_id
    every = corpus.snapshot_chunks(version)
    wanted = {every[5].chunk_id, every[0].chunk_id, every[-1].chunk_id}
    assert corpus.snapshot_chunks(version, wanted | {"not-in-this-snapshot"}) == sorted(
        (c for c in every if c.chunk_id in wanted), key=lambda c: c.chunk_id)
    assert corpus.snapshot_chunks(version, set()) == []


def test_a_shard_reads_its_items_and_their_results_with_the_chunks_they_name(store_url: str, sample_corpus: Path):
    engine = get_engine(store_url)
    corpus, golden, rag = SqlCorpusRepository(engine), SqlGoldenRepository(engine), SqlRagRepository(engine)
    version = snapshot_corpus(sample_corpus, ChunkerConfig(), corpus).version_id
    chunks = corpus.snapshot_chunks(version)
    a, b, c = chunks[0], chunks[1], chunks[2]
    with write_transaction(engine) as conn:
        for n, chunk in enumerate((a, b, c, a)):
            add_revision(conn, f"item-{n}", question=f"q{n}?", answer=f"a{n}", refs=[chunk.ref], corpus_version=version,
                         decision_id=None, question_type="factual", origin="generated")
    build = build_golden(PinTarget(version, chunks, corpus), golden.accepted_items([version]))
    number = golden.save_version(build, None, diff_golden((), build)).number
    responses = [
        RagResponse("item-0", "x", retrieved=(RetrievedChunk(a.chunk_id, a.text, 1.0, 1, source=a.path, span=Span.of(a)),)),
        RagResponse("item-1", "y", retrieved=(RetrievedChunk(None, "own words", 0.5, 1, own_id="o1",
                                                             span=Span(b.path, b.start + 1, b.end), mapping="fuzzy",
                                                             location_score=0.85),)),
        failed("item-2", "timeout", "too slow"),
        RagResponse("item-3", "z", retrieved=(RetrievedChunk(c.chunk_id, c.text, 2.0, 1, source=c.path, span=Span.of(c)),)),
    ]
    run = rag.save_run(version, number, "fixed", "h", {}, responses, golden.version_members(number))

    assert golden.version_item_ids(number) == ["item-0", "item-1", "item-2", "item-3"]
    assert golden.version_items(number, ["item-1", "item-3"]) == [
        i for i in golden.version_items(number) if i.item_id in ("item-1", "item-3")]
    assert rag.chunk_ids(run.run_id, ["item-1", "item-2"]) == set(), "a context given by text names no chunk"
    assert rag.chunk_ids(run.run_id) == {a.chunk_id, c.chunk_id}
    named = {x.chunk_id: x for x in corpus.snapshot_chunks(version, rag.chunk_ids(run.run_id, ["item-0"]))}
    assert set(named) == {a.chunk_id}
    assert rag.results(run.run_id, named, ["item-0", "item-1", "item-2"]) == responses[0:3]
    assert rag.results(run.run_id, item_ids=[]) == []
