"""Prompt caching through the real SDK and the fake Messages API, which accounts for cache_control as the
real API does: the judge's calls share the suite's instructions, and an item's calls its retrieved chunks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.batch import BatchSettings
from rag_assets.llm.budget import Budget
from rag_assets.llm.cache import cache_key
from rag_assets.llm.pricing import Price, cost_usd
from rag_assets.llm.results import LLMStats
from rag_assets.scoring.evaluate import judge_calls
from rag_assets.scoring.judge_prompts import ANSWER_RELEVANCE, FAITHFULNESS
from rag_assets.scoring.metrics.judge_text import RUBRIC
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder
from tests.fakes.judge_world import judge_world

MODEL = "claude-sonnet-5-5"


@pytest.fixture
def world(tmp_path: Path):
    engine = get_engine(f"sqlite:///{tmp_path / 'store.db'}")
    world = judge_world(engine, 6)
    calls = [call for item in world.items
             for call in judge_calls(item, world.responses[item.item_id], world.versions, item.reference_statements)]
    return world, calls, engine


def _client(server: FakeAnthropicServer, **options) -> AnthropicClient:
    return AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, max_concurrency=4, **options)


def test_the_judge_reads_the_cache_on_every_call_after_the_first_and_an_items_later_calls_read_its_chunks(world):
    world, calls, engine = world
    with FakeAnthropicServer(judge_responder) as server:
        results = _client(server).run(calls, SqlLLMCache(engine))
    assert len(results) == 4 * len(world.items) and all(r.ok for r in results)
    first, *later = results
    assert (first.prompt_cache_read_tokens, first.prompt_cache_write_tokens > 0) == (0, True)
    assert all(r.prompt_cache_read_tokens > 0 for r in later), "every call after the first reads the cache"
    by_item: dict[str, dict[str, int]] = {}
    for result in results:
        item, _, task = result.key.rpartition("|")
        by_item.setdefault(item, {})[task] = result.prompt_cache_read_tokens
    static = by_item[world.items[1].item_id]["answer_relevance"]  # the suite's tools and instructions
    for reads in list(by_item.values())[1:]:
        assert reads["faithfulness"] == reads["answer_relevance"] == static  # they write the item's chunks
        assert reads["context_precision"] == reads["context_recall"] > static  # and these read them


def test_an_item_context_no_other_call_reads_gets_no_breakpoint_and_no_cache_write(world):
    world, calls, _ = world
    normal, declined = world.items[:2]
    adversarial = dataclasses.replace(declined, question_type="adversarial")  # judged on faithfulness and relevance
    calls = [*judge_calls(normal, world.responses[normal.item_id], world.versions, normal.reference_statements),
             *judge_calls(adversarial, world.responses[declined.item_id], world.versions, ())]
    with FakeAnthropicServer(judge_responder) as server:
        results = {r.key: r for r in _client(server).run(calls, None)}
        marked = {(r.body["tool_choice"]["name"], declined.question in r.body["messages"][0]["content"]):
                  "cache_control" in r.body["system"][1] for r in server.requests if len(r.body["system"]) == 2}
    lone = results[f"{declined.item_id}|faithfulness"]
    static = results[f"{declined.item_id}|answer_relevance"].prompt_cache_read_tokens
    assert (lone.prompt_cache_write_tokens, lone.prompt_cache_read_tokens) == (0, static)
    assert results[f"{normal.item_id}|context_recall"].prompt_cache_read_tokens > static, "a shared context is cached"
    assert marked == {("record_judge_faithfulness", True): False, ("record_judge_faithfulness", False): True,
                      ("record_judge_context_precision", False): True, ("record_judge_context_recall", False): True}


def test_caching_pays_for_the_suites_longer_prompts_and_halves_their_bill(world, tmp_path: Path):
    world, calls, engine = world
    stats = {}
    with FakeAnthropicServer(judge_responder) as server:
        for caching in (True, False):
            cache = SqlLLMCache(get_engine(f"sqlite:///{tmp_path / f'cache-{caching}.db'}"))
            stats[caching] = LLMStats().add(_client(server, prompt_caching=caching).run(calls, cache))
            server.prompt_cache_clear()
        bodies = [r.body for r in server.requests]
    cached, plain = stats[True], stats[False]
    assert plain.prompt_cache_read_tokens == plain.prompt_cache_write_tokens == 0
    assert {len(b["tools"]) for b in bodies[:len(calls)]} == {4} and {len(b["tools"]) for b in bodies[len(calls):]} == {1}
    assert cached.input_tokens > plain.input_tokens, "without a cache a call carries only its own task"
    assert cached.cost_usd < plain.cost_usd
    same_prompts_uncached = cost_usd(MODEL, cached.input_tokens, cached.output_tokens)
    assert cached.cost_usd <= 0.5 * same_prompts_uncached


def test_usage_is_priced_with_cache_writes_at_1_25_and_reads_at_0_1_of_input_and_that_is_configurable():
    assert cost_usd(MODEL, 1_000, 100, cache_write_tokens=2_000, cache_read_tokens=10_000) == pytest.approx(
        ((1_000 + 2_000 * 1.25 + 10_000 * 0.1) * 2 + 100 * 10) / 1e6)
    custom = {"claude-x": Price(1.0, 2.0, cache_write=2.0, cache_read=0.5)}
    assert cost_usd("claude-x-1", 0, 0, custom, cache_write_tokens=10, cache_read_tokens=100) == pytest.approx(
        (10 * 2.0 + 100 * 0.5) / 1e6)
    assert cost_usd(MODEL, 0, 0, batch=True, cache_read_tokens=1_000_000) == pytest.approx(0.1 * 2 * 0.5)


def test_requests_lay_out_the_suite_then_the_items_chunks_with_breakpoints_and_the_task_last(world):
    world, calls, _ = world
    with FakeAnthropicServer(judge_responder) as server:
        _client(server).run(calls[:4], None)
        bodies = {r.body["tool_choice"]["name"]: r.body for r in server.requests}
    faithfulness, questions = bodies["record_judge_faithfulness"], bodies["record_judge_answer_relevance"]
    assert faithfulness["tools"] == questions["tools"] and len(faithfulness["tools"]) == 4
    instructions, chunks = faithfulness["system"]
    assert questions["system"] == [instructions]
    assert instructions["cache_control"] == chunks["cache_control"] == {"type": "ephemeral"}
    assert FAITHFULNESS.system in instructions["text"] and ANSWER_RELEVANCE.system in instructions["text"]
    assert instructions["text"].count(RUBRIC) == 1, "the rules the tasks share are stated once"
    assert FAITHFULNESS.instructions() == f"{FAITHFULNESS.system}\n{RUBRIC}", "and in each task's own prompt"
    assert chunks["text"].startswith("Retrieved chunks, in rank order:\n\n[")
    assert faithfulness["messages"][0]["content"].startswith("Task record_judge_faithfulness:\n\nQuestion: ")


def test_the_call_cache_key_covers_the_item_context_and_the_suites_tools(world):
    world, calls, _ = world
    client = AnthropicClient(API_KEY, MODEL)
    call = calls[0]
    request = client._request(call)
    other_chunks = {**call.inputs, "chunks": call.inputs["chunks"][:1]}
    assert client._request(type(call)(call.key, call.template, other_chunks)).key != request.key
    assert request.key != cache_key(client.provider, client.model, call.template.ref, request.system, request.user,
                                    {"max_tokens": call.template.max_tokens, "schema": call.template.input_schema()})
    plain = AnthropicClient(API_KEY, MODEL, prompt_caching=False)._request(call)
    assert plain.key != request.key and plain.prompt.tools == (call.template.tool(),)
    assert plain.key == cache_key(client.provider, client.model, call.template.ref, plain.system, plain.user,
                                  {"max_tokens": call.template.max_tokens, "schema": call.template.input_schema()})


def test_batch_requests_carry_the_breakpoints_and_their_usage_is_priced_at_half(world):
    world, calls, engine = world
    batch = {"batch": BatchSettings(min_calls=1, poll_seconds=0.01), "journal": SqlBatchJournal(engine)}
    with FakeAnthropicServer(judge_responder) as server:
        results = _client(server, **batch).run(calls, SqlLLMCache(engine))
        params = server.batches[0].requests[0][1]
    assert server.count() == 0 and all(r.ok and r.via_batch for r in results)
    assert [b["cache_control"] for b in params["system"]] == [{"type": "ephemeral"}] * 2
    stats = LLMStats().add(results)
    assert stats.prompt_cache_read_tokens > 0
    fresh = stats.input_tokens - stats.prompt_cache_read_tokens - stats.prompt_cache_write_tokens
    assert stats.cost_usd == pytest.approx(cost_usd(MODEL, fresh, stats.output_tokens, batch=True,
                                                    cache_write_tokens=stats.prompt_cache_write_tokens,
                                                    cache_read_tokens=stats.prompt_cache_read_tokens))


def test_the_budget_estimate_prices_the_prompt_cache_as_the_server_bills_it(world):
    world, calls, engine = world
    with FakeAnthropicServer(judge_responder) as server:
        client = _client(server, budget=Budget("run", "evaluation", run_max_usd=100.0))
        stats = LLMStats().add(client.run(calls, SqlLLMCache(engine)))
    estimate = client.last_estimate
    assert estimate.counted and estimate.calls == len(calls)
    assert estimate.max_output_tokens == sum(c.template.max_tokens for c in calls)
    estimated_input = estimate.cost_usd - estimate.max_output_tokens * 10 / 1e6
    billed_input = stats.cost_usd - stats.output_tokens * 10 / 1e6
    assert billed_input == pytest.approx(estimated_input, rel=0.1)
    assert estimated_input < 0.5 * cost_usd(MODEL, estimate.input_tokens, 0), "reads priced at a tenth"
