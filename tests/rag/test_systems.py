"""RAG systems: the reference one retrieves the right chunks; user systems fail per item, never the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.errors import ConfigError
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.adapters import CallableRagSystem, HttpRagSystem
from rag_assets.rag.bm25 import Bm25Index
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagQuery
from rag_assets.rag.offline import DECLINE
from rag_assets.rag.reference import ReferenceRagSystem
from rag_assets.rag.system import run_rag
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from tests.conftest import SAMPLE_CORPUS
from tests.fakes.rag_http import KNOWN_CHUNK, FakeRagHttpServer

FACTUAL = [  # question -> the document that states the fact
    ("In version 2.0, what is the maximum file size?", "v2/limits.md"),
    ("What is the default Hub port in version 1.6?", "v1/installation-hub.md"),
    ("In version 2.0, how many requests per minute does the REST API allow?", "v2/api-rate-limits.md"),
    ("How often are vault keys rotated in version 2.0?", "v2/encryption.md"),
    ("What is the default retention window in version 1.6?", "v1/retention-policies.md"),
    ("How many devices can a user link in Kestrel Sync 2.0?", "v2/limits.md"),
]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{tmp_path_factory.mktemp('rag') / 'store.db'}"))
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), repo).version_id
    chunks = repo.snapshot_chunks(version)
    KNOWN_CHUNK["id"] = chunks[0].chunk_id
    return version, chunks


def _reference(chunks, k=3):
    return ReferenceRagSystem(Bm25Index.build(chunks), k, OfflineClient(), None, {c.chunk_id: c.doc_version for c in chunks})


def test_the_reference_system_retrieves_the_document_that_states_the_fact(snapshot):
    version, chunks = snapshot
    path_of = {c.chunk_id: c.path for c in chunks}
    queries = [RagQuery(f"i{n}", q, version) for n, (q, _) in enumerate(FACTUAL)]
    responses = run_rag(_reference(chunks), queries, SnapshotChunks.of(chunks))
    for (question, document), response in zip(FACTUAL, responses):
        assert response.ok and response.retrieved[0].rank == 1
        assert document in [path_of[r.chunk_id] for r in response.retrieved], question


def test_the_offline_generator_cites_the_chunk_it_quotes_and_declines_the_unanswerable(snapshot):
    version, chunks = snapshot
    texts = {c.chunk_id: c.text for c in chunks}
    answered, declined = run_rag(_reference(chunks), [
        RagQuery("a", "In version 2.0, what is the maximum file size?", version),
        RagQuery("b", "How do I pair a Bluetooth keyboard with the holographic projector?", version),
    ], SnapshotChunks.of(chunks))
    assert "15 GB" in answered.answer and answered.citations
    for citation in answered.citations:
        assert citation.claim in texts[citation.chunk_id] and f"[{citation.chunk_id}]" in answered.answer
    assert declined.answer == DECLINE and declined.citations == () and declined.extra["declined"] is True


def test_a_callable_system_answers_and_each_way_of_breaking_is_an_item_error(snapshot):
    version, chunks = snapshot
    system = CallableRagSystem("tests.fakes.rag_systems:by_question", k=3, timeout=0.5, max_concurrency=2)
    questions = ["fine", "please raise", "too slow", "badtype answer", "notadict", "unknown chunk"]
    responses = run_rag(system, [RagQuery(f"i{n}", q, version) for n, q in enumerate(questions)], SnapshotChunks.of(chunks))
    kinds = [(r.error_kind, r.error) for r in responses]
    assert kinds[0] == (None, None) and responses[0].retrieved[0].text == chunks[0].text
    assert kinds[1] == ("exception", "ValueError: index not loaded")
    assert kinds[2] == ("timeout", "no answer within 0.5 s")
    assert kinds[3] == ("bad_response", "answer: expected str, got int")
    assert kinds[4] == ("bad_response", "response: expected dict, got list")
    assert kinds[5] == ("unknown_chunks", f"retrieved[0].chunk_id 'ffffffffffffffff': not a chunk of corpus version "
                                          f"{version} (a retrieved 'chunk_id' names a snapshot chunk; send your own "
                                          "ids as 'id' with the 'text')")
    assert responses[5].retrieved == ()


def test_a_callable_target_that_cannot_be_loaded_is_a_config_error():
    with pytest.raises(ConfigError, match="given as 'module:function'"):
        CallableRagSystem("no_colon_here")
    with pytest.raises(ConfigError, match="cannot load RAG system 'tests.fakes.rag_systems:missing'"):
        CallableRagSystem("tests.fakes.rag_systems:missing")
    with pytest.raises(ConfigError, match="is not callable"):
        CallableRagSystem("tests.fakes.rag_systems:not_callable")


def test_an_http_system_answers_retries_5xx_and_records_every_failure(snapshot):
    version, chunks = snapshot
    with FakeRagHttpServer() as server:
        def run(path: str, **options):
            system = HttpRagSystem(server.base_url + path, k=3, **{"timeout": 1.0, "retries": 2, **options})
            return run_rag(system, [RagQuery("i1", "q?", version), RagQuery("i2", "q?", version)], SnapshotChunks.of(chunks))

        assert [r.error for r in run("/good")] == [None, None]
        assert run("/good")[0].input_tokens == 10
        flaky = run("/flaky", max_concurrency=1)
        assert [r.ok for r in flaky] == [True, True] and server.hits["/flaky"] == 4
        down = run("/down")
        assert {r.error for r in down} == {'HTTP 500: {"error": "boom"}'} and server.hits["/down"] == 6
        assert {(r.error_kind, r.error) for r in run("/slow", timeout=0.3, retries=0)} == {("timeout", "no answer within 0.3 s")}
        assert {r.error_kind for r in run("/badjson")} == {"bad_response"}
        assert {r.error_kind for r in run("/unknown")} == {"unknown_chunks"}
        assert {r.error for r in run("/notfound")} == {'HTTP 404: {"error": "no such route"}'}
        assert server.hits["/notfound"] == 2, "a 4xx is not retried"
    with pytest.raises(ConfigError, match="needs an http"):
        HttpRagSystem("ftp://x")
