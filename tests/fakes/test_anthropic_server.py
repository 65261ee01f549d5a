"""Tests of the fake Messages API server, driven by the real ``anthropic`` SDK where possible."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from enum import Enum
from typing import Any, Literal, Optional

import anthropic
import pytest
from pydantic import BaseModel, Field

from tests.fakes.anthropic_server import (
    BATCH_CREATE,
    BATCH_POLL,
    BATCH_RESULTS,
    COUNT_TOKENS,
    ENDPOINTS,
    REDACTED,
    FakeAnthropicServer,
    RecordedRequest,
    Reply,
    fill_schema,
    schema_filler,
)

API_KEY = f"sk-ant-test-{uuid.uuid4().hex}"
MODEL = "claude-test-model"
MESSAGES = [{"role": "user", "content": "Write one question about the corpus."}]


def _tool(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": f"the {name} tool",
            "input_schema": schema or {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}


def _kwargs(**overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "messages": MESSAGES}
    kwargs.update(overrides)
    return kwargs


def _rough_tokens(value: Any) -> int:
    return max(1, len(value if isinstance(value, str) else json.dumps(value)) // 4)


def _http(server: FakeAnthropicServer, path: str, body: Any = None, *, method: str = "POST",
          api_key: str | None = API_KEY, raw: bytes | None = None) -> tuple[int, dict[str, str], Any]:
    """A plain HTTP request (no SDK), for what the SDK will not send. Returns status, headers, JSON."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(server.base_url + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
    if api_key is not None:
        request.add_header("x-api-key", api_key)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            status, headers, payload = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        status, headers, payload = exc.code, dict(exc.headers), exc.read()
    return status, {k.lower(): v for k, v in headers.items()}, json.loads(payload)


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as fake:
        yield fake


@pytest.fixture
def client(server: FakeAnthropicServer) -> Iterator[anthropic.Anthropic]:
    sdk = anthropic.Anthropic(api_key=API_KEY, base_url=server.base_url, max_retries=5)
    yield sdk
    sdk.close()


# -- answers --------------------------------------------------------------------------------


def test_forced_tool_use_round_trip(server: FakeAnthropicServer, client: anthropic.Anthropic) -> None:
    answer = {"question": "What is BM25?", "facts": [1, 2], "nested": {"ok": True}}
    server.responder = lambda body: Reply(tool_input=answer)

    message = client.messages.create(**_kwargs(tools=[_tool("first"), _tool("emit_question")],
                                               tool_choice={"type": "tool", "name": "emit_question"}))

    assert message.type == "message" and message.role == "assistant" and message.model == MODEL
    assert message.id.startswith("msg_") and message._request_id and message._request_id.startswith("req_")
    assert message.stop_reason == "tool_use" and message.stop_sequence is None
    [block] = message.content
    assert block.type == "tool_use" and block.name == "emit_question" and block.id.startswith("toolu_")
    assert block.input == answer
    [recorded] = server.requests
    assert recorded.status == 200 and recorded.retry_count == 0 and recorded.had_api_key
    assert recorded.body["tool_choice"] == {"type": "tool", "name": "emit_question"}
    assert recorded.started <= recorded.finished
    assert message.usage.input_tokens == _rough_tokens(recorded.body)
    assert message.usage.output_tokens == _rough_tokens(answer)


def test_async_text_reply_with_given_usage_and_stop_reason(server: FakeAnthropicServer) -> None:
    server.responder = lambda body: Reply(text="plain words", input_tokens=1234, output_tokens=56,
                                          stop_reason="max_tokens")

    async def ask() -> anthropic.types.Message:
        async with anthropic.AsyncAnthropic(api_key=API_KEY, base_url=server.base_url) as sdk:
            return await sdk.messages.create(**_kwargs())

    message = asyncio.run(ask())
    assert [(b.type, b.text) for b in message.content] == [("text", "plain words")]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (1234, 56)
    assert message.stop_reason == "max_tokens"


def test_unforced_tool_use_is_named_after_the_first_tool(server: FakeAnthropicServer,
                                                         client: anthropic.Anthropic) -> None:
    server.responder = lambda body: {"q": "a dict is a tool_input"}
    message = client.messages.create(**_kwargs(tools=[_tool("alpha"), _tool("beta")]))
    assert message.content[0].name == "alpha" and message.content[0].input == {"q": "a dict is a tool_input"}


# -- schema_filler --------------------------------------------------------------------------


class Difficulty(str, Enum):
    EASY = "easy"
    HARD = "hard"


class Evidence(BaseModel):
    doc_id: str = Field(min_length=12)
    span: list[int] = Field(min_length=2, max_length=2)
    score: float = Field(gt=0, lt=1)
    page: Optional[int] = Field(default=None, ge=10)


class Question(BaseModel):
    text: str
    difficulty: Difficulty
    kind: Literal["factoid", "multi_hop"]
    evidence: list[Evidence] = Field(min_length=3)
    tags: set[str] = Field(min_length=2)
    hint: Optional[Difficulty] = None
    follow_ups: list[Question] = []
    extra: dict[str, float] = {}
    asked_at: dt.datetime
    ref: uuid.UUID


class QuestionSet(BaseModel):
    questions: list[Question]
    best: Question | None = None
    total: int = Field(ge=1)
    done: bool


def test_schema_filler_answer_validates_against_the_pydantic_model(server: FakeAnthropicServer,
                                                                   client: anthropic.Anthropic) -> None:
    assert server.responder is None  # schema_filler is the default
    message = client.messages.create(**_kwargs(tools=[_tool("emit", QuestionSet.model_json_schema())],
                                               tool_choice={"type": "tool", "name": "emit"}))

    parsed = QuestionSet.model_validate(message.content[0].input)
    question = parsed.questions[0]
    assert parsed.best is not None and question.hint is not None  # optionals get a value
    assert len(question.evidence) == 3 and len(question.tags) == 2
    assert question.follow_ups[0].follow_ups == []  # the recursion stops at the smallest valid value
    assert question.difficulty in Difficulty and question.kind == "factoid"


def test_fill_schema_by_hand() -> None:
    assert fill_schema({"type": "integer", "exclusiveMinimum": 3, "maximum": 9, "multipleOf": 2}) == 4
    assert fill_schema({"type": "string", "enum": ["x", "y"]}) == "x"
    assert fill_schema({"anyOf": [{"type": "null"}, {"type": "boolean"}]}) is True
    assert fill_schema({"type": ["null", "number"], "minimum": 2.5}) == 2.5
    assert fill_schema({"type": "array", "items": {"type": "string"}, "minItems": 0, "maxItems": 0}) == []
    assert fill_schema({"type": "array", "prefixItems": [{"type": "integer"}, {"const": "c"}]}) == [1, "c"]
    assert schema_filler({"model": MODEL}) == Reply(text="example")
    with pytest.raises(ValueError, match="too deep"):
        fill_schema({"$defs": {"L": {"type": "object", "properties": {"next": {"$ref": "#/$defs/L"}},
                                     "required": ["next"]}}, "$ref": "#/$defs/L"})


# -- faults and retries ---------------------------------------------------------------------


def test_sdk_retries_injected_529s(server: FakeAnthropicServer, client: anthropic.Anthropic) -> None:
    server.fail_next = [529, 529]

    raw = client.messages.with_raw_response.create(**_kwargs(tools=[_tool("t")]))

    assert raw.retries_taken == 2
    assert raw.parse().content[0].input == {"q": "example"}
    assert [(r.status, r.retry_count) for r in server.requests] == [(529, 0), (529, 1), (200, 2)]
    assert server.count() == 3 and server.count(status=529) == 2 and server.fail_next == []
    # retry-after-ms: 5 replaces the SDK's own backoff, 0.5 s then 1 s less at most a quarter of jitter, so
    # two retries of its own would take at least 1.125 s between the first arrival and the third
    arrivals = [r.started for r in server.requests]
    assert arrivals[2] - arrivals[0] < 1.1, arrivals


@pytest.mark.parametrize(("status", "error_type", "exc_class"), [
    (529, "overloaded_error", anthropic.OverloadedError),
    (429, "rate_limit_error", anthropic.RateLimitError),
    (500, "api_error", anthropic.InternalServerError),
])
def test_injected_failure_shape(server: FakeAnthropicServer, status: int, error_type: str,
                                exc_class: type[Exception]) -> None:
    server.fail_next = [status]
    with anthropic.Anthropic(api_key=API_KEY, base_url=server.base_url, max_retries=0) as sdk:
        with pytest.raises(exc_class) as caught:
            sdk.messages.create(**_kwargs())
    assert caught.value.status_code == status
    assert caught.value.body == {"type": "error", "error": {"type": error_type, "message": f"injected failure ({status})"}}
    assert caught.value.response.headers["retry-after-ms"] == "5"
    assert caught.value.response.headers["content-type"] == "application/json"


def _statuses_with(fail_rate: float, seed: int, n: int = 30) -> list[int]:
    with FakeAnthropicServer(fail_rate=fail_rate, fail_status=429, seed=seed) as fake:
        with anthropic.Anthropic(api_key=API_KEY, base_url=fake.base_url, max_retries=0) as sdk:
            for _ in range(n):
                try:
                    sdk.messages.create(**_kwargs())
                except anthropic.RateLimitError:
                    pass
        return [r.status for r in fake.requests]


def test_fail_rate_is_reproducible_per_seed() -> None:
    first, again, other = _statuses_with(0.5, seed=7), _statuses_with(0.5, seed=7), _statuses_with(0.5, seed=8)
    assert first == again and first != other
    assert set(first) == {200, 429}
    assert set(_statuses_with(0.0, seed=7, n=5)) == {200} and set(_statuses_with(1.0, seed=7, n=5)) == {429}


def test_fail_next_pass_entries_and_reset(server: FakeAnthropicServer, client: anthropic.Anthropic) -> None:
    server.fail_next = [200, 500]
    client.messages.create(**_kwargs())  # the 200 entry: answered normally
    client.messages.create(**_kwargs())  # the 500, then a retry that gets through
    assert [r.status for r in server.requests] == [200, 500, 200]
    server.reset()
    assert server.requests == [] and server.count() == 0 and server.max_in_flight == 0


def test_responder_bug_is_a_500_the_sdk_does_not_retry(server: FakeAnthropicServer,
                                                       client: anthropic.Anthropic) -> None:
    def broken(body: dict[str, Any]) -> Reply:
        raise KeyError("oops")

    server.responder = broken
    with pytest.raises(anthropic.InternalServerError, match="responder raised KeyError"):
        client.messages.create(**_kwargs())
    assert server.count() == 1 and isinstance(server.errors[0], KeyError)


def test_malformed_json_body_reaches_the_sdk_as_a_decode_error(server: FakeAnthropicServer,
                                                               client: anthropic.Anthropic) -> None:
    server.responder = lambda body: Reply(raw_body='{"id": "msg_1", "type": "message", "content": [{"ty')

    # What anthropic 2.14 does with a 200 whose body is not JSON: it does NOT wrap the problem in an
    # anthropic.APIError and does NOT retry; the stdlib json.JSONDecodeError (a ValueError) escapes
    # from messages.create() as is.
    with pytest.raises(json.JSONDecodeError) as caught:
        client.messages.create(**_kwargs())
    assert not isinstance(caught.value, anthropic.AnthropicError)
    assert server.count() == 1

    # with_raw_response returns normally (the body is only decoded on demand); .parse() raises.
    raw = client.messages.with_raw_response.create(**_kwargs())
    assert raw.status_code == 200 and raw.retries_taken == 0
    with pytest.raises(json.JSONDecodeError):
        raw.parse()

    # Valid JSON of the wrong shape is not an error at all (no strict validation by default):
    # the SDK builds a Message whose fields are None.
    server.responder = lambda body: Reply(raw_body='{"unexpected": true}')
    message = client.messages.create(**_kwargs())
    assert message.content is None and message.usage is None


# -- latency and concurrency ----------------------------------------------------------------


def _concurrent_calls(server: FakeAnthropicServer, calls: int, limit: int | None) -> float:
    async def run() -> float:
        semaphore = asyncio.Semaphore(limit or calls)
        async with anthropic.AsyncAnthropic(api_key=API_KEY, base_url=server.base_url, max_retries=5) as sdk:
            async def one(i: int) -> None:
                async with semaphore:
                    await sdk.messages.create(**_kwargs(messages=[{"role": "user", "content": f"call {i}"}]))

            started = time.monotonic()
            await asyncio.gather(*(one(i) for i in range(calls)))
            return time.monotonic() - started

    return asyncio.run(run())


def test_semaphore_bounds_requests_in_flight(server: FakeAnthropicServer) -> None:
    server.latency = 0.2
    elapsed = _concurrent_calls(server, calls=10, limit=3)
    assert server.max_in_flight == 3
    assert server.count(status=200) == 10 and server.in_flight == 0
    assert elapsed >= 0.8  # 4 waves of 0.2 s
    contents = sorted(r.body["messages"][0]["content"] for r in server.requests)
    assert contents == sorted(f"call {i}" for i in range(10))


def test_unbounded_calls_are_all_in_flight_together(server: FakeAnthropicServer) -> None:
    server.latency = 0.2
    elapsed = _concurrent_calls(server, calls=8, limit=None)
    assert server.max_in_flight == 8, elapsed  # all eight at once is what proves they are not queued


# -- validation and auth --------------------------------------------------------------------


def test_missing_max_tokens_is_a_400(server: FakeAnthropicServer, client: anthropic.Anthropic) -> None:
    # The SDK refuses to build such a request itself: leaving max_tokens out raises TypeError
    # (required_args), and max_tokens=omit without an explicit timeout raises TypeError while it
    # computes the non-streaming timeout. With omit + timeout the request goes out without the key.
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=anthropic.omit, messages=MESSAGES, timeout=10)
    assert caught.value.status_code == 400
    assert caught.value.body["error"] == {"type": "invalid_request_error", "message": "max_tokens: Field required"}
    [recorded] = server.requests  # 400 is not retried
    assert recorded.status == 400 and "max_tokens" not in recorded.body


@pytest.mark.parametrize(("body", "message"), [
    ({"max_tokens": 5, "messages": MESSAGES}, "model: Field required"),
    ({"model": MODEL, "max_tokens": "5", "messages": MESSAGES}, "max_tokens: Input should be a valid integer"),
    ({"model": MODEL, "max_tokens": 5, "messages": []}, "messages: at least one message is required"),
    ({"model": MODEL, "max_tokens": 5}, "messages: Field required"),
    ([1, 2], "The request body must be a JSON object"),
])
def test_invalid_requests_are_400(server: FakeAnthropicServer, body: Any, message: str) -> None:
    status, headers, payload = _http(server, "/v1/messages", body)
    assert status == 400 and headers["content-type"] == "application/json" and "request-id" in headers
    assert payload == {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    assert server.count(status=400) == 1


def test_no_api_key_is_a_401(server: FakeAnthropicServer) -> None:
    status, _, payload = _http(server, "/v1/messages", _kwargs(), api_key=None)
    assert status == 401 and payload["error"]["type"] == "authentication_error"
    assert server.requests[0].had_api_key is False and server.requests[0].status == 401


def test_the_api_key_never_reaches_the_log(server: FakeAnthropicServer, client: anthropic.Anthropic) -> None:
    server.fail_next = [529]
    client.messages.create(**_kwargs(tools=[_tool("t")]))  # the SDK sends Authorization: Bearer <key>
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=MODEL, max_tokens=anthropic.omit, messages=MESSAGES, timeout=10)
    _http(server, "/v1/messages", _kwargs(messages=[{"role": "user", "content": f"echo {API_KEY}"}]))

    records = server.requests
    assert len(records) == 4 and all(r.had_api_key for r in records)
    assert API_KEY not in repr(records)
    assert records[0].headers["authorization"] == REDACTED and records[-1].headers["x-api-key"] == REDACTED
    assert records[-1].body["messages"][0]["content"] == f"echo {REDACTED}"


# -- message batches ------------------------------------------------------------------------


def _batch_requests(*custom_ids: str) -> list[dict[str, Any]]:
    return [{"custom_id": c, "params": _kwargs(tools=[_tool("t")], tool_choice={"type": "tool", "name": "t"},
                                              messages=[{"role": "user", "content": f"{c} {API_KEY}"}])}
            for c in custom_ids]


def test_a_batch_through_the_sdk_ends_after_its_delay_with_results_in_any_order(server: FakeAnthropicServer,
                                                                                client: anthropic.Anthropic) -> None:
    server.batch_delay = 0.2
    server.batch_outcome = lambda custom_id, _: {"b": "errored", "c": "expired", "d": "canceled"}.get(
        custom_id, "succeeded")
    created = client.messages.batches.create(requests=_batch_requests("a", "b", "c", "d"))
    assert created.processing_status == "in_progress" and created.request_counts.processing == 4
    assert created.results_url is None and created.id.startswith("msgbatch_")
    status, _, payload = _http(server, f"/v1/messages/batches/{created.id}/results", method="GET")
    assert (status, payload["error"]["message"]) == (
        400, f"message batch {created.id} is still in progress; its results are not ready")
    time.sleep(0.2)
    ended = client.messages.batches.retrieve(created.id)
    assert ended.processing_status == "ended" and ended.ended_at is not None
    assert ended.request_counts.model_dump() == {"processing": 0, "succeeded": 1, "errored": 1, "expired": 1,
                                                 "canceled": 1}
    lines = list(client.messages.batches.results(created.id))
    assert [line.custom_id for line in lines] == ["d", "c", "b", "a"]
    assert lines[3].result.type == "succeeded" and lines[3].result.message.content[0].input == {"q": "example"}
    assert lines[2].result.type == "errored" and lines[2].result.error.error.type == "overloaded_error"
    [batch] = server.batches
    assert (batch.polls, batch.results_reads) == (2, 2)  # results() retrieves the batch first
    assert API_KEY not in repr(batch.requests) and batch.requests[0][1]["messages"][0]["content"] == f"a {REDACTED}"
    assert server.count() == 0, "batch requests are not POST /v1/messages records"


@pytest.mark.parametrize(("requests", "message"), [
    ([], "requests: a non-empty list of requests is required"),
    (_batch_requests("a b"), "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    (_batch_requests("a", "a"), "requests.1.custom_id: 'a' is not unique within the batch"),
    ([{"custom_id": "a", "params": {"model": MODEL, "messages": MESSAGES}}],
     "requests.0.params.max_tokens: Field required"),
])
def test_invalid_batches_are_400(server: FakeAnthropicServer, requests: Any, message: str) -> None:
    status, _, payload = _http(server, "/v1/messages/batches", {"requests": requests})
    assert (status, payload["error"]["message"]) == (400, message) and server.batches == []


def test_an_unknown_batch_is_a_404_and_batches_need_a_key(server: FakeAnthropicServer,
                                                          client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.NotFoundError, match="message batch msgbatch_nope not found"):
        client.messages.batches.retrieve("msgbatch_nope")
    status, _, _ = _http(server, "/v1/messages/batches", {"requests": _batch_requests("a")}, api_key=None)
    assert status == 401 and server.batches == []


# -- other endpoints and lifecycle ----------------------------------------------------------


def test_count_tokens_and_unknown_paths(server: FakeAnthropicServer, client: anthropic.Anthropic) -> None:
    counted = client.messages.count_tokens(model=MODEL, messages=MESSAGES)
    assert counted.input_tokens >= 1
    with pytest.raises(anthropic.NotFoundError):
        client.models.list()
    status, _, payload = _http(server, "/v1/nope", {})
    assert status == 404 and payload["error"]["type"] == "not_found_error"
    assert server.count() == 0  # only POST /v1/messages is recorded


def test_hits_count_every_endpoint_whatever_the_answer(server: FakeAnthropicServer,
                                                      client: anthropic.Anthropic) -> None:
    client.messages.count_tokens(model=MODEL, messages=MESSAGES)
    _http(server, "/v1/messages/count_tokens", {"model": MODEL, "messages": MESSAGES}, api_key=None)  # a 401
    _http(server, "/v1/messages/batches", {"requests": []})  # a 400
    created = client.messages.batches.create(requests=_batch_requests("a"))
    client.messages.batches.retrieve(created.id)
    list(client.messages.batches.results(created.id))  # retrieves the batch, then reads its results
    _http(server, "/v1/messages", _kwargs(), api_key=None)
    assert {e: server.hits(e) for e in ENDPOINTS} == {
        "POST /v1/messages": 1, COUNT_TOKENS: 2, BATCH_CREATE: 2, BATCH_POLL: 2, BATCH_RESULTS: 1}
    assert server.count() == 1
    server.reset()
    assert [server.hits(e) for e in ENDPOINTS] == [0] * 5
    with pytest.raises(ValueError, match="is not one of"):
        server.hits("/v1/messages")


def test_hold_lets_requests_in_flight_meet_before_any_is_answered() -> None:
    with FakeAnthropicServer() as server:
        server.hold = threading.Barrier(3)
        threads = [threading.Thread(target=_http, args=(server, "/v1/messages", _kwargs())) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=15)
        assert server.count(status=200) == 3 and server.max_in_flight == 3
        assert not server.hold.broken, "met, not timed out"


def test_response_is_the_messages_api_shape(server: FakeAnthropicServer) -> None:
    status, headers, payload = _http(server, "/v1/messages", _kwargs(tools=[_tool("t")]))
    assert status == 200 and headers["content-type"] == "application/json"
    assert headers["request-id"].startswith("req_")
    assert set(payload) == {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
    assert payload["usage"] == {"input_tokens": payload["usage"]["input_tokens"], "output_tokens": _rough_tokens({"q": "example"}),
                                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert payload["content"] == [{"type": "tool_use", "id": payload["content"][0]["id"], "name": "t",
                                   "input": {"q": "example"}}]


def test_recorded_request_is_frozen(server: FakeAnthropicServer) -> None:
    _http(server, "/v1/messages", _kwargs())
    record = server.requests[0]
    assert isinstance(record, RecordedRequest)
    with pytest.raises(AttributeError):
        record.status = 500  # type: ignore[misc]


def test_stop_closes_everything() -> None:
    fake = FakeAnthropicServer().start()
    port = int(fake.base_url.rsplit(":", 1)[1])
    sdk = anthropic.Anthropic(api_key=API_KEY, base_url=fake.base_url, max_retries=0)
    sdk.messages.create(**_kwargs())  # leaves a keep-alive connection open
    fake.latency = 60.0
    outcome: list[object] = []

    def slow_call() -> None:
        try:
            outcome.append(sdk.messages.create(**_kwargs()))
        except anthropic.APIConnectionError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=slow_call)
    caller.start()
    deadline = time.monotonic() + 2
    while fake.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    thread, started = fake._thread, time.monotonic()
    fake.stop()  # wakes the request sleeping on `latency` instead of waiting 60 s
    fake.stop()  # idempotent
    caller.join(timeout=30)
    assert time.monotonic() - started < 30 and not caller.is_alive() and len(outcome) == 1
    assert thread is not None and not thread.is_alive() and not fake.running
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    with pytest.raises(anthropic.APIConnectionError):
        sdk.messages.create(**_kwargs())
    sdk.close()
