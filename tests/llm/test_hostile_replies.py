"""Replies a model (or a proxy in front of it) may send that are no answer: cut off at the token limit, a
tool_use of another tool, prose instead of the forced tool call, and the API key echoed back. The real
anthropic SDK against the fake Messages API on 127.0.0.1, direct and through Message Batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.generation.prompts import GENERATE_QUESTIONS
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.batch import BatchSettings
from rag_assets.llm.budget import Budget
from rag_assets.llm.results import LLMCall, LLMResult
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.fakes import anthropic_server
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY, generation_responder
from tests.llm.test_refusals import _calls

MODEL = "claude-sonnet-5-5"
TOOL = GENERATE_QUESTIONS.tool_name
FAST = BatchSettings(min_calls=1, poll_seconds=0.01, max_poll_seconds=0.05, max_wait_seconds=30)
CALL = LLMCall("task-1", GENERATE_QUESTIONS, {"question_type": "factual", "count": 1, "chunks": [
    {"chunk_id": "0123456789abcdef", "title": "Limits", "path": "limits.md", "version": "2.0", "heading": "Limits",
     "text": "Files can be at most 15 GB."}]})
VALID = {"questions": [{"question": "How large can a file be in 2.0?", "answer": "At most 15 GB.",
                        "relevant_chunk_ids": ["0123456789abcdef"]}]}
LIMIT = GENERATE_QUESTIONS.max_tokens
#: the error of an answer cut off twice: first at the template's limit, then at twice that (asked again afresh)
CUT_OFF = f"the answer was cut off at the token limit (max_tokens {2 * LIMIT}) and may be incomplete"


def _run(server: FakeAnthropicServer, tmp_path: Path | None = None, **options) -> LLMResult:
    if tmp_path is not None:  # through Message Batches, with the journal in a real store
        options.update(batch=FAST, journal=SqlBatchJournal(get_engine(f"sqlite:///{tmp_path / 'batch.db'}")))
    client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, **options)
    [result] = client.run([CALL])
    return result


def _message(content: list[dict], stop_reason: str = "tool_use") -> str:
    return json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": content,
                       "stop_reason": stop_reason, "stop_sequence": None,
                       "usage": {"input_tokens": 100, "output_tokens": 50}})


# -- 1. an answer cut off at max_tokens ----------------------------------------------------------------------


def test_a_tool_answer_cut_off_at_max_tokens_is_a_parse_error_never_an_answer(tmp_path: Path):
    cache = SqlLLMCache(get_engine(f"sqlite:///{tmp_path / 'cache.db'}"))
    # a schema-valid partial input: the fake model stopped at the limit after the first (shortened) answer
    with FakeAnthropicServer(lambda body: Reply(tool_input=VALID, stop_reason="max_tokens")) as server:
        client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0)
        [result] = client.run([CALL], cache)
        first, retry = (r.body for r in server.requests[:2])
        [again] = client.run([CALL], cache)
        assert server.count() == 4, "nothing was cached: the re-run asked again"
    assert result.output is None and result.error_kind == "parse_error" and result.requests == 2
    assert result.error.startswith(CUT_OFF + ": ")
    assert (first["max_tokens"], retry["max_tokens"]) == (LIMIT, 2 * LIMIT)
    assert retry["messages"] == first["messages"], "asked afresh: the cut-off answer is not sent back to be mended"
    assert again.output is None and again.error_kind == "parse_error"


def test_an_answer_cut_off_at_the_limit_is_asked_again_with_twice_the_room_and_the_whole_answer_taken():
    """The same request would stop at the same place: a long judgment (many claims) failed on every run."""
    def room_for_the_answer(body: dict) -> Reply:
        return Reply(tool_input=VALID, stop_reason="max_tokens" if body["max_tokens"] <= LIMIT else "tool_use")

    with FakeAnthropicServer(room_for_the_answer) as server:
        result = _run(server)
        assert [r.body["max_tokens"] for r in server.requests] == [LIMIT, 2 * LIMIT]
    assert result.output == VALID and result.repaired and result.requests == 2


def test_a_text_answer_cut_off_at_max_tokens_is_a_parse_error():
    with FakeAnthropicServer(lambda body: Reply(text="The questions are", stop_reason="max_tokens")) as server:
        result = _run(server)
    assert result.output is None and result.error_kind == "parse_error"
    assert result.error == CUT_OFF + ": 'The questions are'"


def test_a_batch_answer_cut_off_at_max_tokens_is_repaired_directly_then_a_parse_error(tmp_path: Path):
    with FakeAnthropicServer(lambda body: Reply(tool_input=VALID, stop_reason="max_tokens"),
                             batch_delay=0.01) as server:
        result = _run(server, tmp_path)
        assert len(server.batches) == 1 and server.count() == 1, "the batch answer, then one direct repair"
    assert result.via_batch and result.output is None and result.error_kind == "parse_error"
    assert result.error.startswith(CUT_OFF + ": ")


# -- 3. only a tool_use of the forced tool is an answer ---------------------------------------------------


def test_every_request_forces_the_templates_tool():
    with FakeAnthropicServer(generation_responder) as server:
        _run(server)
        assert server.requests[0].body["tool_choice"] == {"type": "tool", "name": TOOL}


def test_a_tool_use_of_another_tool_is_a_parse_error():
    wrong = _message([{"type": "tool_use", "id": "toolu_1", "name": "some_other_tool", "input": VALID}])
    with FakeAnthropicServer(lambda body: Reply(raw_body=wrong)) as server:
        result = _run(server)
        repair = server.requests[1].body["messages"]
    assert result.output is None and result.error_kind == "parse_error" and result.requests == 2
    assert result.error == f"the answer called the tool 'some_other_tool', not {TOOL}"
    assert repair[2]["content"][0]["tool_use_id"] == "toolu_1"


def test_prose_holding_a_json_object_is_no_answer_when_the_tool_was_forced():
    prose = "Sorry, I cannot do this. For reference the expected format is " + json.dumps(VALID)
    with FakeAnthropicServer(lambda body: Reply(text=prose)) as server:
        result = _run(server)
        assert server.count() == 2
    assert result.output is None and result.error_kind == "parse_error"
    assert result.error == f"the answer was not a {TOOL} tool call: {prose[:200]!r}"


def test_a_batch_answer_of_another_tool_is_a_parse_error(tmp_path: Path):
    wrong = _message([{"type": "tool_use", "id": "toolu_1", "name": "some_other_tool", "input": VALID}])
    with FakeAnthropicServer(lambda body: Reply(raw_body=wrong), batch_delay=0.01) as server:
        result = _run(server, tmp_path)
    assert result.via_batch and result.output is None and result.error_kind == "parse_error"
    assert result.error == f"the answer called the tool 'some_other_tool', not {TOOL}"


# -- 2. the API key echoed back never leaves the client -----------------------------------------------------

def _echo_error(body: dict) -> Reply:
    # the fake answers a responder's exception as a 500 whose message is the exception's (no retry)
    raise RuntimeError(f"invalid x-api-key: {API_KEY}")


def test_a_key_echoed_in_an_error_body_is_blanked_out_of_the_recorded_error(monkeypatch):
    # anthropic 2.x reads ANTHROPIC_AUTH_TOKEN only when no api_key is passed, and the client always passes one
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "auth-token-this-test-never-sends")
    with FakeAnthropicServer(_echo_error) as server:
        result = _run(server)
        assert server.requests[0].had_api_key
    assert result.error_kind == "api_error" and result.output is None
    assert result.error == "Anthropic API error 500: api_error: responder raised RuntimeError: invalid x-api-key: ***"


def test_a_key_echoed_in_text_is_blanked_out_of_the_parse_error():
    with FakeAnthropicServer(lambda body: Reply(text=f"I was called with {API_KEY} and will not answer")) as server:
        result = _run(server)
    assert result.error_kind == "parse_error" and API_KEY not in result.error
    assert result.error == f"the answer was not a {TOOL} tool call: 'I was called with *** and will not answer'"


def test_a_key_echoed_inside_a_tool_answer_is_blanked_out_of_the_answer():
    echoed = {"questions": [dict(VALID["questions"][0], answer=f"At most 15 GB ({API_KEY}).")]}
    with FakeAnthropicServer(lambda body: Reply(tool_input=echoed)) as server:
        result = _run(server)
    assert result.output["questions"][0]["answer"] == "At most 15 GB (***)."
    assert API_KEY not in json.dumps(result.output)


def test_a_key_echoed_in_a_batch_error_is_blanked_out_of_the_fallback_and_the_error(tmp_path: Path):
    with FakeAnthropicServer(_echo_error, batch_delay=0.01) as server:
        result = _run(server, tmp_path)
    assert result.batch_fallback == ("the batch request errored: api_error: responder raised RuntimeError: "
                                     "invalid x-api-key: ***")
    assert result.error == "Anthropic API error 500: api_error: responder raised RuntimeError: invalid x-api-key: ***"


@pytest.mark.parametrize(("status", "refused_by"), [(401, "a message"), (403, "a message"), (401, "token counting"),
                                                   (401, "a batch submit")])
def test_a_key_echoed_in_a_refusal_is_blanked_out_of_every_call_it_stops(monkeypatch, tmp_path: Path, status: int,
                                                                          refused_by: str):
    """The error type of a 401/403 body names the refusal in the error of every call not sent after it, in this run
    and the client's next: a proxy echoing the key there must not copy it into each of them."""
    error_type = anthropic_server._error_type
    monkeypatch.setattr(anthropic_server, "_error_type",
                        lambda code: f"key {API_KEY} refused" if code in (401, 403) else error_type(code))
    options = {"budget": Budget("run-1", "evaluation", run_max_usd=5.0)} if refused_by == "token counting" else {}
    if refused_by == "a batch submit":
        options.update(batch=FAST, journal=SqlBatchJournal(get_engine(f"sqlite:///{tmp_path / 'batch.db'}")))
    refusing = {"fail_rate": 1.0, "fail_status": status} if refused_by == "a message" else {"revoked_keys": {API_KEY}}
    with FakeAnthropicServer(generation_responder, **refusing) as server:
        client = AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, max_concurrency=1,
                                 **options)
        results = client.run(_calls(3)) + client.run(_calls(4))
    texts = [t for r in results for t in (r.error, r.batch_fallback) if t is not None]
    assert not any(API_KEY in t for t in texts) and len(texts) >= 7
    refusal = "the API refused the key (401 key *** refused)" if status == 401 else \
        "the API refused permission (403 key *** refused)"
    assert sum(r.error.startswith(f"not sent: {refusal} on an earlier call") for r in results) >= 6


def test_an_answer_with_no_content_block_is_recorded_as_empty():
    """A tester's fake answered ``"content": []``: recorded as "not a tool call: 'None'", as if it had said None."""
    with FakeAnthropicServer(lambda body: Reply(raw_body=_message([]))) as server:
        result = _run(server)
        assert server.count() == 2, "asked once more, as for any answer that is no tool call"
    assert result.output is None and result.error_kind == "parse_error"
    assert result.error == "the answer was empty (no content blocks)"
