"""What the client sends after the API refuses: nothing once the key (401) or its permission (403) is refused, every
remaining call recorded as failed with that first error; a 400 is not retried; a 500/529 still is. The real
anthropic SDK against the fake Messages API on 127.0.0.1."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.app.probes import ProbeOutcome
from rag_assets.errors import BatchNotFinished
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.batch import BatchSettings
from rag_assets.llm.budget import Budget
from rag_assets.llm.results import LLMCall, LLMResult, LLMStats
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from tests.fakes.anthropic_server import BATCH_CREATE, BATCH_POLL, COUNT_TOKENS, MESSAGES, FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY, generation_responder

MODEL = "claude-sonnet-5-5"
REFUSED_KEY = ("not sent: the API refused the key (401 authentication_error) on an earlier call "
               "(Anthropic API error 401: authentication_error: injected failure (401))")
REVOKED = "Anthropic API error 401: authentication_error: invalid x-api-key"


def _calls(count: int) -> list[LLMCall]:
    return [LLMCall(f"task-{i}", GENERATE_QUESTIONS, {"question_type": "factual", "count": 1, "chunks": [
        {"chunk_id": f"{i:016x}", "title": "Limits", "path": "limits.md", "version": "2.0", "heading": "Limits",
         "text": f"Files can be at most {i} GB."}]}) for i in range(count)]


def _run(server: FakeAnthropicServer, count: int, **options) -> list[LLMResult]:
    options = {"max_retries": 4, "max_concurrency": 1, **options}
    return AnthropicClient(API_KEY, MODEL, base_url=server.base_url, **options).run(_calls(count))


def test_a_refused_key_gets_one_request_and_every_call_fails_with_that_error():
    with FakeAnthropicServer(generation_responder, fail_rate=1.0, fail_status=401) as server:
        results = _run(server, 20)
        assert server.count() == server.count(status=401) == 1, "the first 401 stops the run, and is not retried"
    assert not any(r.ok for r in results) and {r.error_kind for r in results} == {"api_error"}
    first, *rest = results
    assert first.error == "Anthropic API error 401: authentication_error: injected failure (401)"
    assert (first.requests, first.retries) == (1, 0)
    assert {r.error for r in rest} == {REFUSED_KEY} and {r.requests for r in rest} == {0}
    stats = LLMStats().add(results)
    assert (stats.calls, stats.requests, stats.api_errors, stats.retries) == (20, 1, 20, 0)
    assert (stats.cache_misses, stats.sent) == (20, 1), "19 calls missed the cache and were not sent"
    assert LLMStats().merge(stats).merge(stats).sent == 2
    probes = ProbeOutcome("ev-1", 20, stats, 200, [])
    assert (probes.probe_calls, probes.probe_cached) == (1, 0), "one probe call sent (billed), 19 not"


def test_with_concurrent_calls_only_those_in_flight_at_the_first_401_are_sent():
    with FakeAnthropicServer(generation_responder, fail_rate=1.0, fail_status=401) as server:
        server.hold = threading.Barrier(4)  # the 401s are answered once all 4 are in flight, however slow the machine
        results = _run(server, 20, max_concurrency=4, prompt_caching=False)
        assert not server.hold.broken, "the 4 requests met at the fake"
        assert server.count() == server.max_in_flight == 4
    assert sum(r.requests for r in results) == 4 and not any(r.ok for r in results)
    assert sum(r.error == REFUSED_KEY for r in results) == 16


def test_a_refused_permission_gets_one_request_and_is_named():
    with FakeAnthropicServer(generation_responder, fail_rate=1.0, fail_status=403) as server:
        results = _run(server, 5)
        assert server.count() == 1
    assert results[0].error == "Anthropic API error 403: permission_error: injected failure (403)"
    assert {r.error for r in results[1:]} == {
        "not sent: the API refused permission (403 permission_error) on an earlier call "
        "(Anthropic API error 403: permission_error: injected failure (403))"}


def test_a_later_run_of_the_refused_client_sends_nothing_and_a_new_client_sends_again():
    """A step may run its client more than once (the judge's statements, then its verdicts): one request in all."""
    with FakeAnthropicServer(generation_responder, fail_rate=1.0, fail_status=401) as server:
        client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, max_concurrency=1)
        assert not any(r.ok for r in client.run(_calls(3)))
        assert {r.error for r in client.run(_calls(4)[1:])} == {REFUSED_KEY}
        assert server.count() == 1
        server.fail_rate = 0.0
        assert all(r.ok for r in AnthropicClient(API_KEY, MODEL, base_url=server.base_url).run(_calls(3)))
        assert server.count() == 1 + 3


def test_a_400_is_not_retried_and_does_not_stop_the_other_calls():
    with FakeAnthropicServer(generation_responder) as server:
        server.fail_next = [400]
        results = _run(server, 3)
        assert server.count() == 3 and server.count(status=400) == 1
    assert results[0].error == "Anthropic API error 400: invalid_request_error: injected failure (400)"
    assert (results[0].requests, results[0].retries) == (1, 0)
    assert all(r.ok for r in results[1:])


def test_a_529_or_500_is_still_retried_and_one_that_outlasts_the_retries_does_not_stop_the_run():
    with FakeAnthropicServer(generation_responder) as server:
        server.fail_next = [529, 500]
        [answered] = _run(server, 1)
        assert server.count() == 3
        assert answered.ok and answered.retries == 2
    with FakeAnthropicServer(generation_responder) as server:
        server.fail_next = [529, 529, 529]
        results = _run(server, 2, max_retries=2)
        assert server.count() == 3 + 1
    assert results[0].error == "Anthropic API error 529: overloaded_error: injected failure (529)"
    assert results[1].ok


def test_a_key_refused_by_token_counting_sends_no_message():
    """With a budget the run first counts tokens: a 401 there is the run's refusal, before any call."""
    with FakeAnthropicServer(generation_responder, revoked_keys={API_KEY}) as server:
        results = _run(server, 3, budget=Budget("run-1", "evaluation", run_max_usd=5.0))
        assert server.count() == 0
    assert {r.error for r in results} == {
        f"not sent: the API refused the key (401 authentication_error) on an earlier call ({REVOKED})"}


def test_a_key_refused_by_the_batch_submit_is_asked_nothing_directly(tmp_path: Path):
    journal = SqlBatchJournal(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    settings = BatchSettings(min_calls=1, max_requests=2, poll_seconds=0.01, max_poll_seconds=0.05)
    with FakeAnthropicServer(generation_responder, revoked_keys={API_KEY}) as server:
        results = _run(server, 6, batch=settings, journal=journal)
        assert server.count() == 0 and server.batches == []
    assert {r.batch_fallback for r in results} == {f"the batch submit failed: {REVOKED}"}
    assert {r.error for r in results} == {
        f"not sent: the API refused the key (401 authentication_error) on an earlier call ({REVOKED})"}
    assert {r.requests for r in results} == {0}


def _journal(tmp_path: Path) -> SqlBatchJournal:
    return SqlBatchJournal(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))


def _hits(server: FakeAnthropicServer) -> tuple[int, int, int, int]:
    return tuple(server.hits(e) for e in (COUNT_TOKENS, BATCH_CREATE, BATCH_POLL, MESSAGES))


def test_later_runs_of_a_client_refused_by_token_counting_count_and_submit_nothing(tmp_path: Path):
    """With a budget and batches, the first run's token count is refused: nor it, nor a batch, nor a message is
    sent again by the client's later runs (their calls are not sent, naming that refusal)."""
    settings = BatchSettings(min_calls=1, max_requests=2, poll_seconds=0.01, max_poll_seconds=0.05)
    with FakeAnthropicServer(generation_responder, revoked_keys={API_KEY}) as server:
        client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, max_concurrency=1,
                                 batch=settings, journal=_journal(tmp_path),
                                 budget=Budget("run-1", "evaluation", run_max_usd=5.0))
        runs = [client.run(_calls(4 + i)) for i in range(3)]
        assert _hits(server) == (1, 0, 0, 0), "one token count, refused; nothing after it"
    for results in runs:
        assert {r.error for r in results} == {
            f"not sent: the API refused the key (401 authentication_error) on an earlier call ({REVOKED})"}
        assert {r.requests for r in results} == {0} and {r.batch_fallback for r in results} == {None}


def test_later_runs_of_a_client_refused_by_a_batch_submit_submit_nothing(tmp_path: Path):
    settings = BatchSettings(min_calls=1, max_requests=2, poll_seconds=0.01, max_poll_seconds=0.05)
    with FakeAnthropicServer(generation_responder, revoked_keys={API_KEY}) as server:
        client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, max_concurrency=1,
                                 batch=settings, journal=_journal(tmp_path))
        first, *later = [client.run(_calls(4 + i)) for i in range(3)]
        assert _hits(server) == (0, 1, 0, 0), "one batch submit, refused; nothing after it"
    refusal = f"not sent: the API refused the key (401 authentication_error) on an earlier call ({REVOKED})"
    assert {r.batch_fallback for r in first} == {f"the batch submit failed: {REVOKED}"}
    for results in later:
        assert {r.error for r in results} == {refusal} and {r.batch_fallback for r in results} == {None}


def test_a_client_refused_by_a_message_later_counts_no_tokens_and_submits_no_batch(tmp_path: Path):
    """The token counting and batch endpoints answer (only messages are refused here): a later run of the refused
    client would get counts and batch answers, yet sends neither."""
    settings = BatchSettings(min_calls=5, poll_seconds=0.01, max_poll_seconds=0.05)
    with FakeAnthropicServer(generation_responder, fail_rate=1.0, fail_status=401) as server:
        client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, max_concurrency=1,
                                 batch=settings, journal=_journal(tmp_path),
                                 budget=Budget("run-1", "evaluation", run_max_usd=5.0))
        assert not any(r.ok for r in client.run(_calls(3)))  # too few for a batch: asked directly, refused
        assert _hits(server) == (1, 0, 0, 1)
        later = client.run(_calls(6))  # enough for a batch
        assert _hits(server) == (1, 0, 0, 1) and server.batches == []
    assert {r.error for r in later} == {REFUSED_KEY} and {r.requests for r in later} == {0}


def test_a_batch_submit_refused_in_a_run_that_resumes_a_batch_polls_nothing(tmp_path: Path):
    """A run resumes the pending batch of 2 of its 4 calls and submits the 2 others: that submit is refused, so the
    pending batch is not polled (it stays pending in the journal) and no call is sent."""
    settings = BatchSettings(min_calls=1, poll_seconds=0.01, max_poll_seconds=0.05, max_wait_seconds=0)
    journal = _journal(tmp_path)
    with FakeAnthropicServer(generation_responder, batch_delay=3600) as server:
        with pytest.raises(BatchNotFinished):
            AnthropicClient(API_KEY, MODEL, base_url=server.base_url, batch=settings, journal=journal).run(_calls(2))
        assert _hits(server) == (0, 1, 1, 0)
        server.revoked_keys.add(API_KEY)
        results = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, journal=journal,
                                  batch=replace(settings, max_wait_seconds=30)).run(_calls(4))
        assert _hits(server) == (0, 2, 1, 0), "the refused submit, and no poll after it"
        [pending] = server.batches
    assert journal.pending("anthropic", pending.custom_ids) == {pending.id: set(pending.custom_ids)}
    assert {r.requests for r in results} == {0} and not any(r.ok for r in results)
    assert {r.error for r in results} == {
        f"not sent: the API refused the key (401 authentication_error) on an earlier call ({REVOKED})"}
