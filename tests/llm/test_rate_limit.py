"""The requests-per-minute bound, seen where it matters: arrival times at the fake Messages API."""

from __future__ import annotations

import threading

import pytest

from rag_assets.defs.resources import LLMResource
from rag_assets.llm.results import LLMCall
from rag_assets.scoring.judge_prompts import REFERENCE_STATEMENTS
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY

RPM = 300  # one request every 0.2 s: fast enough for a test, slow enough to measure on a loaded machine
INTERVAL = 60 / RPM
# Noise between a paced send and the server's arrival stamp (first connection, threads of a loaded
# machine): 0.27 s was seen with the full suite and a second e2e run beside it.
JITTER = 2 * INTERVAL


def _calls(prefix: str, n: int) -> list[LLMCall]:
    return [LLMCall(f"{prefix}{i}", REFERENCE_STATEMENTS, {"question": f"Question {prefix}{i}?",
                                                           "reference": f"Answer {prefix}{i}."}) for i in range(n)]


def _assert_paced(arrivals: list[float]) -> None:
    """Any k+1 consecutive requests span k intervals, less the scheduling noise of a loaded machine
    (a late first request, a late thread): never more than the rate in any window. Windows of 6 and
    of all the requests: long enough that the noise is a small part of them. Unpaced, the requests
    arrive in bursts of max_concurrency (4), nearly together or a latency apart, and neither passes."""
    arrivals = sorted(arrivals)
    for k in (6, len(arrivals) - 1):
        spans = [arrivals[i + k] - arrivals[i] for i in range(len(arrivals) - k)]
        assert min(spans) >= k * INTERVAL - JITTER, (k, [round(b - a, 3) for a, b in zip(arrivals, arrivals[1:])])


def _resource(server: FakeAnthropicServer, **options) -> LLMResource:
    return LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0, **options)


def test_requests_reach_the_api_no_faster_than_the_configured_rate_while_still_overlapping():
    with FakeAnthropicServer(latency=0.5) as server:
        results = _resource(server, requests_per_minute=RPM, max_concurrency=4).client(
            "claude-rate-test-a").run(_calls("a", 12))
        arrivals = [r.started for r in server.requests]
        assert all(r.output is not None for r in results) and len(arrivals) == 12
        _assert_paced(arrivals)
        assert server.max_in_flight >= 2, "pacing spaces sends; it does not serialize requests"


def test_clients_in_two_threads_of_one_process_share_one_pace():
    """Generator and judge clients of one step (or two threads of a step) draw on one budget per model."""
    with FakeAnthropicServer(latency=0.05) as server:
        resource = _resource(server, requests_per_minute=RPM, max_concurrency=4)
        threads = [threading.Thread(target=lambda p=prefix: resource.client("claude-rate-test-b").run(_calls(p, 6)))
                   for prefix in ("x", "y")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert len(server.requests) == 12
        _assert_paced([r.started for r in server.requests])


def test_without_a_rate_the_client_sends_at_once_and_a_rate_below_one_is_refused():
    with FakeAnthropicServer(latency=0.2) as server:
        _resource(server, max_concurrency=8).client("claude-rate-test-c").run(_calls("c", 8))
        assert server.max_in_flight == 8
        with pytest.raises(ValueError, match="requests_per_minute"):
            _resource(server, requests_per_minute=0).client()
