"""The fake Messages API's prompt cache, driven through the real anthropic SDK: prefix match up to each
breakpoint in the order tools, system, messages; the minimum cacheable length per model; the time to live."""

from __future__ import annotations

import json

import anthropic
import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer

EPHEMERAL = {"type": "ephemeral"}
TOOL = {"name": "record", "description": "Record it.", "input_schema": {"type": "object", "properties": {}}}
CHOICE = {"type": "tool", "name": "record"}
LONG = "Instructions. " * 400  # 5,600 characters: 1,400 tokens by the fake's estimate
CONTEXT = "Chunk text. " * 200


def _tokens(*blocks: dict) -> int:
    """The fake's estimate of a prefix: its blocks, cache_control removed, as JSON, a token per 4 characters."""
    plain = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
    return len(json.dumps(plain, sort_keys=True)) // 4


def _text(text: str, cached: bool = True) -> dict:
    return {"type": "text", "text": text, **({"cache_control": EPHEMERAL} if cached else {})}


def _ask(server: FakeAnthropicServer, system: list[dict], user: str = "What now?", *, model: str = "claude-sonnet-5-5",
         tools: list[dict] | None = None, tool_choice: dict | None = None, user_cached: bool = False):
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=server.base_url, max_retries=0)
    content = [_text(user, cached=user_cached)]
    return client.messages.create(model=model, max_tokens=64, system=system, tools=tools or [TOOL],
                                  tool_choice=tool_choice or CHOICE, messages=[{"role": "user", "content": content}]).usage


def test_the_first_request_writes_the_prefix_and_the_next_reads_it_whatever_follows():
    with FakeAnthropicServer() as server:
        first = _ask(server, [_text(LONG)], "first question")
        second = _ask(server, [_text(LONG)], "another question, longer than the first one")
        total = server.requests[1].usage
    prefix = _tokens(TOOL, {"type": "text", "text": LONG})
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (prefix, 0)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, prefix)
    assert total == {"input_tokens": second.input_tokens, "output_tokens": second.output_tokens,
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": prefix}
    assert second.input_tokens > 0


def test_a_prefix_shorter_than_the_models_minimum_is_not_cached_and_haiku_needs_twice_as_much():
    short = "Be brief. " * 100  # about 270 tokens
    with FakeAnthropicServer() as server:
        usages = [_ask(server, [_text(short)]) for _ in range(2)]
        haiku = [_ask(server, [_text(LONG)], model="claude-haiku-4-5") for _ in range(2)]
        sonnet = [_ask(server, [_text(LONG)], model="claude-sonnet-5-5") for _ in range(2)]
    assert all((u.cache_creation_input_tokens, u.cache_read_input_tokens) == (0, 0) for u in usages + haiku)
    assert 1024 <= _tokens(TOOL, {"type": "text", "text": LONG}) < 2048
    assert sonnet[1].cache_read_input_tokens == sonnet[0].cache_creation_input_tokens > 0


def test_the_cache_expires_after_its_time_to_live_and_a_read_refreshes_it():
    now = [1000.0]
    with FakeAnthropicServer(cache_clock=lambda: now[0]) as server:  # the default time to live: 5 minutes
        _ask(server, [_text(LONG)])
        now[0] += 200
        refreshed = _ask(server, [_text(LONG)])
        now[0] += 200  # 400 s after the write, 200 s after the read
        still = _ask(server, [_text(LONG)])
        now[0] += 301
        expired = _ask(server, [_text(LONG)])
    assert refreshed.cache_read_input_tokens > 0 and still.cache_read_input_tokens > 0
    assert (expired.cache_read_input_tokens, expired.cache_creation_input_tokens > 0) == (0, True)


def test_the_longest_matching_breakpoint_is_read_and_the_rest_written():
    with FakeAnthropicServer() as server:
        _ask(server, [_text(LONG), _text("item one: " + CONTEXT)])
        other_item = _ask(server, [_text(LONG), _text("item two: " + CONTEXT)])
        same_item = _ask(server, [_text(LONG), _text("item two: " + CONTEXT)], "a different task")
    static = _tokens(TOOL, _text(LONG))
    both = _tokens(TOOL, _text(LONG), _text("item two: " + CONTEXT))
    assert (other_item.cache_read_input_tokens, other_item.cache_creation_input_tokens) == (static, both - static)
    assert (same_item.cache_read_input_tokens, same_item.cache_creation_input_tokens) == (both, 0)


def test_tools_come_first_so_other_tools_miss_the_system_prefix():
    other = {**TOOL, "name": "other"}
    with FakeAnthropicServer() as server:
        _ask(server, [_text(LONG)])
        changed = _ask(server, [_text(LONG)], tools=[other], tool_choice={"type": "tool", "name": "other"})
    assert changed.cache_read_input_tokens == 0 and changed.cache_creation_input_tokens > 0


def test_a_new_tool_choice_invalidates_a_message_breakpoint_but_not_a_system_one():
    other = {**TOOL, "name": "other"}
    tools = [TOOL, other]
    long_user = "Question text. " * 400
    with FakeAnthropicServer() as server:
        _ask(server, [_text("Short.", cached=False)], long_user, tools=tools, user_cached=True)
        in_messages = _ask(server, [_text("Short.", cached=False)], long_user, tools=tools, user_cached=True,
                           tool_choice={"type": "tool", "name": "other"})
        _ask(server, [_text(LONG)], tools=tools)
        in_system = _ask(server, [_text(LONG)], tools=tools, tool_choice={"type": "tool", "name": "other"})
    assert in_messages.cache_read_input_tokens == 0 and in_messages.cache_creation_input_tokens > 0
    assert in_system.cache_read_input_tokens > 0


@pytest.mark.parametrize("system", ["a plain string system prompt " * 300, [_text(LONG, cached=False)]])
def test_without_cache_control_nothing_is_cached(system):
    with FakeAnthropicServer() as server:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=server.base_url, max_retries=0)
        usages = [client.messages.create(model="claude-sonnet-5-5", max_tokens=8, system=system,
                                         messages=[{"role": "user", "content": "hi"}]).usage for _ in range(2)]
    assert all((u.cache_creation_input_tokens, u.cache_read_input_tokens) == (0, 0) for u in usages)
