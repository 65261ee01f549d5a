"""The real anthropic SDK against the project's fake Messages API server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.generation.generate import run_generation
from rag_assets.generation.planning import plan_tasks
from rag_assets.generation.models import GenerationConfig
from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.results import LLMCall
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.conftest import SAMPLE_CORPUS
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY, generation_responder

CONFIG = GenerationConfig(max_tasks=12)


@pytest.fixture
def store(tmp_path: Path):
    engine = get_engine(f"sqlite:///{tmp_path / 'store.db'}")
    corpus = SqlCorpusRepository(engine)
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), corpus).version_id
    return version, corpus.snapshot_chunks(version), SqlLLMCache(engine)


def _client(server: FakeAnthropicServer, **options) -> AnthropicClient:
    options = {"max_retries": 6, "max_concurrency": 4, **options}
    return AnthropicClient(API_KEY, options.pop("model", "claude-sonnet-5-5"), base_url=server.base_url, **options)


def _generate(server, store, **options):
    version, chunks, cache = store
    tasks = plan_tasks(chunks, set(), CONFIG)
    return tasks, run_generation(tasks, _client(server, **options), cache, version)


def test_the_request_carries_model_max_tokens_and_the_schema_as_a_forced_tool(fake_claude, store):
    tasks, outcome = _generate(fake_claude, store)
    assert len(outcome.candidates) == len(tasks) == 12
    body = fake_claude.requests[0].body
    assert body["model"] == "claude-sonnet-5-5"
    assert body["max_tokens"] == GENERATE_QUESTIONS.max_tokens
    assert body["system"] == [{"type": "text", "text": GENERATE_QUESTIONS.system, "cache_control": {"type": "ephemeral"}}]
    assert body["tools"] == [{"name": "record_generate_questions", "description": GENERATE_QUESTIONS.tool_description,
                              "input_schema": GENERATE_QUESTIONS.input_schema()}]
    assert body["tool_choice"] == {"type": "tool", "name": "record_generate_questions"}
    assert {c.provider for c in outcome.candidates} == {"anthropic"}
    stats = outcome.stats
    assert (stats.requests, stats.input_tokens, stats.output_tokens) == (12, 12_000, 1_200)
    assert stats.cost_usd == pytest.approx(12 * (1000 * 2 + 100 * 10) / 1e6)  # Sonnet 5.5: $2 / $10 per MTok


def test_with_30_percent_overloaded_answers_every_candidate_is_still_made_and_retries_are_counted(store):
    with FakeAnthropicServer(generation_responder) as clean:
        _, expected = _generate(clean, store)
    version, chunks, _ = store
    with FakeAnthropicServer(generation_responder, fail_rate=0.3, fail_status=529, seed=7) as flaky:
        tasks = plan_tasks(chunks, set(), CONFIG)
        outcome = run_generation(tasks, _client(flaky), None, version)
        overloaded = flaky.count(status=529)
    assert overloaded > 0
    assert [c.candidate_id for c in outcome.candidates] == [c.candidate_id for c in expected.candidates]
    assert outcome.stats.retries == overloaded
    assert outcome.stats.api_errors == 0


def test_a_schema_invalid_answer_is_repaired_once_with_a_tool_result(fake_claude, store):
    answers = iter([{"questions": [{"question": "Too short?"}]}])

    def first_bad(body: dict) -> Reply:
        bad = next(answers, None)
        return Reply(tool_input=bad) if bad is not None else generation_responder(body)

    version, chunks, _ = store
    fake_claude.responder = first_bad
    client = _client(fake_claude, max_concurrency=1)
    tasks = plan_tasks(chunks, set(), GenerationConfig(max_tasks=1, type_mix={"factual": 1}))
    outcome = run_generation(tasks, client, None, version)
    assert len(outcome.candidates) == 1 and outcome.stats.repairs == 1
    repair = fake_claude.requests[1].body["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    result_block = repair[2]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["is_error"] is True
    assert "questions.0.answer: Field required" in result_block["content"]


def test_an_answer_that_stays_invalid_is_a_recorded_parse_error_and_no_candidate(fake_claude, store):
    version, chunks, _ = store
    fake_claude.responder = lambda body: Reply(raw_body='{"id": "msg_1", "type": "message", "content": [{"type": "tool_u')
    tasks = plan_tasks(chunks, set(), GenerationConfig(max_tasks=2, type_mix={"factual": 1}))
    outcome = run_generation(tasks, _client(fake_claude), None, version)
    assert outcome.candidates == []
    assert [f.error_kind for f in outcome.failures] == ["parse_error", "parse_error"]
    assert "unreadable response body (JSONDecodeError)" in outcome.failures[0].error
    assert fake_claude.count() == 4, "one repair attempt per call, then it is recorded"
    assert outcome.stats.parse_errors == 2


def test_an_api_that_keeps_failing_gives_api_errors_after_the_sdk_retries(store):
    version, chunks, _ = store
    with FakeAnthropicServer(generation_responder, fail_rate=1.0, fail_status=529) as down:
        tasks = plan_tasks(chunks, set(), GenerationConfig(max_tasks=2, type_mix={"factual": 1}))
        outcome = run_generation(tasks, _client(down, max_retries=2), None, version)
        assert down.count(status=529) == 6
    assert outcome.candidates == []
    assert {f.error_kind for f in outcome.failures} == {"api_error"}
    assert "Anthropic API error 529: overloaded_error" in outcome.failures[0].error
    assert outcome.stats.retries == 4


def test_concurrency_measured_at_the_server_never_exceeds_the_bound(fake_claude, store):
    fake_claude.latency = 0.15
    _generate(fake_claude, store, max_concurrency=3)
    assert fake_claude.max_in_flight == 3


def test_a_second_run_makes_zero_calls_and_a_new_model_misses(fake_claude, store):
    _, first = _generate(fake_claude, store)
    calls = fake_claude.count()
    _, second = _generate(fake_claude, store)
    assert fake_claude.count() == calls, "every answer came from the cache"
    assert second.stats.cache_hits == 12 and second.stats.cache_misses == 0 and second.stats.cost_usd == 0
    assert [c.candidate_id for c in second.candidates] == [c.candidate_id for c in first.candidates]
    _, third = _generate(fake_claude, store, model="claude-haiku-5-5")
    assert fake_claude.count() == calls + 12 and third.stats.cache_misses == 12


def test_a_new_template_version_misses_the_cache(fake_claude, store):
    from dataclasses import replace

    _, _, cache = store
    client = _client(fake_claude)
    call = LLMCall("k", GENERATE_QUESTIONS, {"question_type": "factual", "count": 1, "chunks": []})
    client.run([call], cache)
    client.run([call], cache)
    client.run([LLMCall("k", replace(GENERATE_QUESTIONS, version="2"), call.inputs)], cache)
    assert fake_claude.count() == 2
