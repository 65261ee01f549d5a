"""The Message Batches path of the Anthropic client: the real SDK against the fake server's batch
endpoints, with the batch journal in a real store."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.errors import BatchNotFinished
from rag_assets.generation.models import GenerationConfig
from rag_assets.generation.planning import plan_tasks
from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.batch import BatchRequest, BatchSettings, split
from rag_assets.llm.cache import cache_key
from rag_assets.llm.results import ANTHROPIC, LLMCall, LLMResult, LLMStats
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY, generation_responder

MODEL = "claude-sonnet-5-5"
FAST = BatchSettings(min_calls=1, poll_seconds=0.01, max_poll_seconds=0.05, max_wait_seconds=30)


def _calls(store_url: str, count: int = 12) -> list[LLMCall]:
    """Generation calls over the sample corpus (snapshotted into the store at ``store_url`` if needed)."""
    corpus = SqlCorpusRepository(get_engine(store_url))
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), corpus).version_id
    tasks = plan_tasks(corpus.snapshot_chunks(version), set(), GenerationConfig(max_tasks=count))
    return [LLMCall(t.task_id, GENERATE_QUESTIONS, t.inputs()) for t in tasks]


def _client(server: FakeAnthropicServer, store_url: str | None, settings: BatchSettings | None = FAST,
            **options) -> AnthropicClient:
    journal = SqlBatchJournal(get_engine(store_url)) if store_url and settings else None
    return AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=1, batch=settings, journal=journal,
                           **options)


def _custom_id(call: LLMCall) -> str:
    return cache_key("anthropic", MODEL, GENERATE_QUESTIONS.ref, GENERATE_QUESTIONS.system,
                     GENERATE_QUESTIONS.render(call.inputs),
                     {"max_tokens": GENERATE_QUESTIONS.max_tokens, "schema": GENERATE_QUESTIONS.input_schema()})


def _answers(results: list[LLMResult]) -> dict[str, dict | None]:
    return {r.key: r.output for r in results}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def direct(tmp_path: Path) -> dict[str, dict | None]:
    """What the direct path answers for the same calls (in a store of its own)."""
    url = f"sqlite:///{tmp_path / 'direct.db'}"
    with FakeAnthropicServer(generation_responder) as server:
        results = _client(server, None, None).run(_calls(url))
        assert server.count() == 12
    return _answers(results)


def test_one_batch_answers_every_miss_at_half_the_price_and_a_rerun_is_all_cache(db, direct):
    calls = _calls(db)
    cache = SqlLLMCache(get_engine(db))
    with FakeAnthropicServer(generation_responder, batch_delay=0.03) as server:
        results = _client(server, db).run(calls, cache)
        assert server.count() == 0, "no direct request"
        [batch] = server.batches
        assert batch.results_reads == 1 and batch.polls >= 2
        assert sorted(batch.custom_ids) == sorted(_custom_id(c) for c in calls)
        sent = dict(batch.requests)[_custom_id(calls[0])]
        assert sent["tools"][0]["name"] == "record_generate_questions" and sent["model"] == MODEL
        again = _client(server, db).run(calls, cache)
        assert len(server.batches) == 1 and server.count() == 0, "a re-run makes zero calls"
    assert _answers(results) == direct
    stats = LLMStats().add(results)
    assert (stats.batched, stats.batch_fallbacks, stats.requests, stats.cache_misses) == (12, 0, 12, 12)
    assert stats.cost_usd == pytest.approx(12 * (1000 * 2 + 100 * 10) / 1e6 / 2), "half the direct price"
    assert stats.as_dict()["llm_via_batch"] == 12
    assert all(r.cached for r in again) and _answers(again) == direct
    assert SqlBatchJournal(get_engine(db)).pending("anthropic", batch.custom_ids) == {}, "the batch is marked done"


def test_polls_back_off_exponentially_up_to_the_cap(db):
    settings = BatchSettings(min_calls=1, poll_seconds=0.02, max_poll_seconds=0.08)
    with FakeAnthropicServer(generation_responder, batch_delay=1.0) as server:
        _client(server, db, settings).run(_calls(db, 2))
        [batch] = server.batches
    gaps = [later - earlier for earlier, later in zip(batch.poll_times, batch.poll_times[1:])]
    waits = [0.02, 0.04, 0.08, 0.08, 0.08]
    assert len(gaps) >= len(waits) and batch.polls <= 18, gaps
    assert all(gap >= wait - 0.005 for gap, wait in zip(gaps, waits)), gaps


def test_fewer_misses_than_min_calls_go_direct(db, direct):
    with FakeAnthropicServer(generation_responder) as server:
        results = _client(server, db, BatchSettings(min_calls=13)).run(_calls(db))
        assert server.batches == [] and server.count() == 12
    assert _answers(results) == direct and not any(r.via_batch for r in results)


def test_more_requests_than_a_batch_holds_are_split(db, direct):
    settings = BatchSettings(min_calls=1, max_requests=5, poll_seconds=0.01)
    with FakeAnthropicServer(generation_responder) as server:
        results = _client(server, db, settings).run(_calls(db))
        assert [len(b.requests) for b in server.batches] == [5, 5, 2] and server.count() == 0
    assert _answers(results) == direct


def test_split_respects_the_size_limit_too():
    requests = [BatchRequest(f"r{i}", f"k{i}", "t@1", {"text": "x" * 100}) for i in range(5)]
    sizes = [len(chunk) for chunk in split(requests, BatchSettings(max_bytes=300))]
    assert sizes == [2, 2, 1]


def test_merged_shard_tallies_keep_their_batched_calls_and_batch_fallbacks():
    """The merge of shard answers reports the batch use of every shard, not 0 (``llm_via_batch``)."""
    first = LLMStats(ANTHROPIC, "m", calls=5, cache_misses=5, sent=5, requests=6, batched=4, batch_fallbacks=1)
    second = LLMStats(ANTHROPIC, "m", calls=3, cache_misses=3, sent=3, requests=3, batched=3)
    merged = LLMStats().merge(first).merge(second)
    assert (merged.calls, merged.requests, merged.batched, merged.batch_fallbacks) == (8, 9, 7, 1)
    assert (merged.as_dict()["llm_via_batch"], merged.as_dict()["llm_batch_fallbacks"]) == (7, 1)


def test_errored_expired_and_canceled_results_fall_back_to_direct_calls(db, direct):
    calls = _calls(db)
    failing = {_custom_id(calls[0]): "errored", _custom_id(calls[1]): "expired", _custom_id(calls[2]): "canceled"}
    with FakeAnthropicServer(generation_responder,
                             batch_outcome=lambda custom_id, _: failing.get(custom_id, "succeeded")) as server:
        results = _client(server, db).run(calls)
        assert len(server.batches) == 1 and server.count() == 3, "exactly the three failures were asked directly"
        asked = {r.body["messages"][0]["content"] for r in server.requests}
    assert asked == {GENERATE_QUESTIONS.render(c.inputs) for c in calls[:3]}
    assert _answers(results) == direct
    reasons = [r.batch_fallback for r in results[:3]]
    assert reasons == ["the batch request errored: overloaded_error: Overloaded", "the batch request was expired",
                       "the batch request was canceled"]
    stats = LLMStats().add(results)
    assert (stats.batched, stats.batch_fallbacks, stats.requests) == (9, 3, 12)
    direct_cost, batch_cost = (1000 * 2 + 100 * 10) / 1e6, (1000 * 2 + 100 * 10) / 1e6 / 2
    assert stats.cost_usd == pytest.approx(3 * direct_cost + 9 * batch_cost)


def test_a_schema_invalid_batch_answer_gets_its_one_repair_directly(db, direct):
    calls = _calls(db)
    broken = GENERATE_QUESTIONS.render(calls[0].inputs)

    def batch_breaks_one(body: dict) -> Reply:
        if body["messages"] == [{"role": "user", "content": broken}]:
            return Reply(tool_input={"questions": [{"question": "Too short?"}]})
        return generation_responder(body)

    with FakeAnthropicServer(batch_breaks_one) as server:
        results = _client(server, db).run(calls)
        [repair] = server.requests
    assert [m["role"] for m in repair.body["messages"]] == ["user", "assistant", "user"]
    assert repair.body["messages"][2]["content"][0]["is_error"] is True
    assert results[0].via_batch and results[0].repaired and results[0].requests == 2
    assert _answers(results) == direct


def test_a_failed_submit_leaves_every_call_to_the_direct_path(db):
    with FakeAnthropicServer(generation_responder) as server:
        results = AnthropicClient(API_KEY, MODEL, base_url=server.base_url + "/nowhere", max_retries=0,
                                  batch=FAST, journal=SqlBatchJournal(get_engine(db))).run(_calls(db))
        assert server.batches == []
    assert {r.batch_fallback for r in results} == {
        "the batch submit failed: Anthropic API error 404: not_found_error: "
        "POST /nowhere/v1/messages/batches is not served by the fake server"}
    assert {r.error_kind for r in results} == {"api_error"} and {r.requests for r in results} == {1}


def test_a_batch_the_provider_does_not_know_is_marked_lost_and_its_calls_go_direct(db, direct):
    calls = _calls(db)
    journal = SqlBatchJournal(get_engine(db))
    journal.record("msgbatch_gone", "anthropic", MODEL, [BatchRequest(_custom_id(c), c.key, GENERATE_QUESTIONS.ref, {})
                                                         for c in calls[:4]])
    with FakeAnthropicServer(generation_responder) as server:
        results = _client(server, db).run(calls)
        [batch] = server.batches
        assert len(batch.requests) == 8 and server.count() == 4
    gone = "batch msgbatch_gone is unknown to the provider or its results are gone"
    assert [r.batch_fallback for r in results[:4]] == [gone] * 4
    assert journal.pending("anthropic", [_custom_id(c) for c in calls]) == {}
    assert _answers(results) == direct


def test_an_archived_batch_is_marked_lost_and_its_calls_go_direct(db, direct):
    calls = _calls(db)
    waiting = BatchSettings(min_calls=1, poll_seconds=0.01, max_wait_seconds=0.05)
    with FakeAnthropicServer(generation_responder, batch_delay=3600) as server:
        with pytest.raises(BatchNotFinished):
            _client(server, db, waiting).run(calls)
        [batch] = server.batches
        server.batch_delay = 0
        server.archive(batch.id)
        results = _client(server, db).run(calls)
        assert len(server.batches) == 1 and server.count() == 12
    assert {r.batch_fallback for r in results} == {
        f"batch {batch.id} is unknown to the provider or its results are gone"}
    assert _answers(results) == direct


def test_a_poll_deadline_stops_the_run_and_the_next_run_resumes_the_same_batch(db, direct):
    calls = _calls(db)
    waiting = BatchSettings(min_calls=1, poll_seconds=0.01, max_poll_seconds=0.02, max_wait_seconds=0.1)
    with FakeAnthropicServer(generation_responder, batch_delay=3600) as server:
        with pytest.raises(BatchNotFinished, match=r"batch msgbatch_\w+ has not ended after 0.1s; it stays pending"):
            _client(server, db, waiting).run(calls)
        [batch] = server.batches
        assert batch.polls >= 1, "it polled before its deadline (how often depends on the machine's load)"
        pending = SqlBatchJournal(get_engine(db)).pending("anthropic", [_custom_id(c) for c in calls])
        assert pending == {batch.id: set(batch.custom_ids)}
        server.batch_delay = 0
        results = _client(server, db).run(calls)
        assert len(server.batches) == 1 and server.count() == 0, "resumed, not submitted again"
    assert _answers(results) == direct


def _submit_and_wait_forever(store_url: str, base_url: str) -> None:
    """The child process of the crash test: submits and polls until it is killed."""
    patient = BatchSettings(min_calls=1, poll_seconds=0.05, max_poll_seconds=0.05)
    client = AnthropicClient(API_KEY, MODEL, base_url=base_url, batch=patient,
                             journal=SqlBatchJournal(get_engine(store_url)))
    client.run(_calls(store_url), SqlLLMCache(get_engine(store_url)))


def test_a_process_killed_while_polling_is_resumed_by_the_next_run_without_a_second_batch(db, direct):
    calls = _calls(db)
    journal = SqlBatchJournal(get_engine(db))
    with FakeAnthropicServer(generation_responder, batch_delay=3600) as server:
        child = subprocess.Popen(
            [sys.executable, "-c", "import sys; from tests.llm.test_batches import _submit_and_wait_forever as f; "
                                   "f(sys.argv[1], sys.argv[2])", db, server.base_url], cwd=PROJECT_ROOT)
        try:
            deadline = time.monotonic() + 60
            while not journal.pending("anthropic", [_custom_id(c) for c in calls]):
                assert child.poll() is None and time.monotonic() < deadline, "the child never recorded its batch"
                time.sleep(0.05)
            while server.batches[0].polls < 2:
                time.sleep(0.02)
        finally:
            child.kill()
            child.wait()
        server.batch_delay = 0
        results = _client(server, db).run(calls, SqlLLMCache(get_engine(db)))
        assert len(server.batches) == 1 and server.count() == 0, "one batch created, in all"
    assert _answers(results) == direct
    assert [r.key for r in results] == [c.key for c in calls]


def test_the_journal_round_trip_on_both_stores(store_url: str):
    journal = SqlBatchJournal(get_engine(store_url))
    journal.record("msgbatch_a", "anthropic", MODEL, [BatchRequest("x", "item-1", "t@1", {}),
                                                      BatchRequest("y", "item-2", "t@1", {})])
    journal.record("msgbatch_b", "anthropic", MODEL, [BatchRequest("y", "item-2", "t@1", {})])
    assert journal.pending("anthropic", ["x", "y", "z"]) == {"msgbatch_a": {"x", "y"}, "msgbatch_b": {"y"}}
    assert journal.pending("other", ["x"]) == {}
    journal.finish("msgbatch_a", "ended")
    journal.finish("msgbatch_a", "lost")  # an ended batch stays ended
    assert journal.pending("anthropic", ["x", "y"]) == {"msgbatch_b": {"y"}}


def test_batch_settings_are_checked_and_the_batch_path_needs_a_journal():
    with pytest.raises(ValueError, match="poll_seconds must be positive"):
        BatchSettings(poll_seconds=0)
    with pytest.raises(ValueError, match="min_calls, max_requests and max_bytes"):
        BatchSettings(max_requests=0)
    with pytest.raises(ValueError, match="needs a journal"):
        AnthropicClient(API_KEY, MODEL, batch=FAST)
