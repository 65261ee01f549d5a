"""A fake Anthropic Messages API server for tests (standard library only).

The real ``anthropic`` SDK talks to it through ``base_url``::

    with FakeAnthropicServer(latency=0.05, fail_rate=0.2, seed=1) as server:
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test-x", base_url=server.base_url, max_retries=5)
        ...
        assert server.count(status=529) > 0

What it does, in the order it does it, for every ``POST /v1/messages``:

1. 401 ``authentication_error`` when the request has no API key: neither a non-empty ``x-api-key``
   header nor ``Authorization: Bearer <token>`` (anthropic 2.x sends ``api_key`` as the latter), or
   one of ``revoked_keys`` (a wrong or revoked key; on every endpoint, as the real API refuses it).
2. 400 ``invalid_request_error`` when the body is not a JSON object, or lacks ``model``, an integer
   ``max_tokens`` >= 1 or a non-empty ``messages`` list, asks for streaming, or has a
   ``tool_choice`` that names no tool of the request.
3. Fault injection: the next status of ``fail_next`` (popped in order), else, with probability
   ``fail_rate``, ``fail_status``. The draw comes from ``random.Random(seed)`` under a lock, in the
   order requests arrive, so a run is reproducible. Requests rejected by 1 or 2 draw nothing.
   Injected failures carry ``retry-after-ms: <retry_after_ms>`` so the SDK retries at once.
   A status below 400 in ``fail_next`` means "answer this one normally".
4. The responder: ``(body) -> Reply`` (default :func:`schema_filler`). If it raises, the fake
   answers 500 ``api_error`` with ``x-should-retry: false`` (so the SDK does not retry a bug in the
   test) and keeps the exception in ``server.errors``.

Prompt caching, as the real API accounts for it: every block of the request, in the order tools,
system, messages, is a candidate prefix end; a block with ``cache_control`` is a breakpoint. The
prefix up to a breakpoint is cacheable when it has at least ``cache_min_tokens(model)`` tokens (by
the fake's estimate, ``len(json.dumps(prefix blocks)) // 4``; default 1024, 2048 for Haiku-class
models). Its key is the model and the exact prefix (``cache_control`` itself excluded) and, for a
breakpoint in the messages, the ``tool_choice`` (changing it invalidates message blocks' caches). The
longest cached, unexpired prefix of a request is read (``cache_read_input_tokens``); the prefixes up
to every cacheable breakpoint are then written or refreshed for ``cache_ttl`` seconds (default 300,
the 5-minute cache; measured on ``cache_clock``, which a test may replace), and the tokens past the read one up to the last cacheable breakpoint are
``cache_creation_input_tokens``; ``input_tokens`` is the rest. An entry is written when its request
is answered (the real API: once the answer begins), so requests sent together all write.
``server.prompt_cache_clear()`` forgets every entry.

Every such request sleeps ``latency`` seconds before it is answered (rejected and failed ones too),
and counts as "in flight" from its arrival until just *before* its response is written, so a
client can never see an answer while the fake still counts that request: ``max_in_flight`` is exact.
With ``hold`` set (a ``threading.Barrier(n)``), every such request waits at it after its arrival, so the
first ``n`` are in flight together before any is answered, whatever the machine's load (a barrier not
met within 10 s, or one the test aborts, lets its requests go on).

Every ``POST /v1/messages`` ends up in ``server.requests`` (arrival order) as a
:class:`RecordedRequest` whose ``x-api-key``/``authorization`` header values are replaced by
``"<redacted>"`` (and any other occurrence of the key, in headers or body, too).

``POST /v1/messages/count_tokens`` answers ``{"input_tokens": n}`` (no latency, no faults, not
recorded).

The Message Batches API, in the wire format the real SDK parses (``client.messages.batches``):

- ``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}, ...]}``: 401 without a
  key; 400 when ``requests`` is not a non-empty list, a ``custom_id`` does not match
  ``^[a-zA-Z0-9_-]{1,64}$`` or repeats, or a ``params`` is an invalid Messages request (as above).
  Else a new batch, ``in_progress``. No latency, no fault injection.
- ``GET /v1/messages/batches/{id}``: the batch object (404 for an unknown id). It ends
  ``batch_delay`` seconds after its creation (read at each poll, so a test may shorten it while a
  client waits); at the first poll after that, every request gets its outcome:
  ``batch_outcome(custom_id, params)`` (default: ``"succeeded"``) is ``succeeded`` (the responder
  answers ``params`` as if they were a ``POST /v1/messages``; a failing answer becomes an
  ``errored`` result with that error), ``errored`` (an ``overloaded_error``), ``expired`` or
  ``canceled``. The ended batch has ``request_counts`` and a ``results_url``.
- ``GET /v1/messages/batches/{id}/results``: the JSONL results, in *reverse* request order (the
  real API promises no order: clients must match by ``custom_id``); 400 while in progress, 404
  once ``server.archive(id)`` aged the batch past the real API's 29 days.

``server.batches`` lists every created batch as a :class:`FakeBatch` (secrets scrubbed, with its
poll and results-read counts). Anything else is a 404 ``not_found_error``.

``server.hits(endpoint)`` counts the requests that reached an endpoint, whatever their answer (a 401
too): one of ``ENDPOINTS``, ``"POST /v1/messages"`` (the only one ``count()`` records),
``"POST /v1/messages/count_tokens"``, ``"POST /v1/messages/batches"``, ``"GET /v1/messages/batches/{id}"``
and ``"GET /v1/messages/batches/{id}/results"``.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import json
import math
import random
import re
import socket
import socketserver
import sys
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

__all__ = [
    "ERROR_TYPES",
    "REDACTED",
    "BatchOutcomeRule",
    "FakeAnthropicServer",
    "FakeBatch",
    "RecordedRequest",
    "Reply",
    "Responder",
    "fill_schema",
    "schema_filler",
]

REDACTED = "<redacted>"

#: error ``type`` of the body the real API sends with each status
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_REASONS = {529: "Overloaded"}
_SECRET_HEADERS = ("x-api-key", "authorization", "proxy-authorization")


def _error_type(status: int) -> str:
    return ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


# --------------------------------------------------------------------------------------------
# replies and responders
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """What a responder answers; exactly one of ``tool_input``, ``text`` or ``raw_body``.

    ``tool_input``: a ``tool_use`` block named after the forced tool (``tool_choice``
    ``{"type": "tool", "name": ...}``), else after the request's first tool.
    ``text``: a ``text`` block.
    ``raw_body``: sent verbatim as a 200 ``application/json`` body (malformed/truncated JSON...).
    Token counts default to ``input_tokens_of(body)`` (``len(json.dumps(body)) // 4`` with the
    ``cache_control`` markers left out, as they are no prompt text) and ``len(output) // 4`` (at least 1),
    where output is ``json.dumps(tool_input)`` or ``text``; ``stop_reason`` defaults to
    ``"tool_use"`` / ``"end_turn"``.
    """

    tool_input: dict[str, Any] | None = None
    text: str | None = None
    raw_body: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None

    def __post_init__(self) -> None:
        given = [name for name in ("tool_input", "text", "raw_body") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a Reply needs exactly one of tool_input, text, raw_body (got {given or 'none'})")
        if self.tool_input is not None and not isinstance(self.tool_input, dict):
            raise TypeError("Reply.tool_input must be a dict")


#: a responder may also return a dict (taken as ``tool_input``) or a str (taken as ``text``)
Responder = Callable[[dict[str, Any]], Union[Reply, dict, str]]


def _chosen_tool(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool a tool_use answer is for: the forced one, else the first one, else None."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and isinstance(choice.get("name"), str):
        return next((t for t in tools if t.get("name") == choice["name"]), {"name": choice["name"]})
    return tools[0] if tools else None


def schema_filler(body: dict[str, Any]) -> Reply:
    """Default responder: a tool input that satisfies the answered tool's ``input_schema``.

    The answered tool is the one forced by ``tool_choice``, else the first tool (so the input always
    matches the tool_use block's name). A request without tools gets ``Reply(text="example")``.
    """
    tool = _chosen_tool(body)
    if tool is None:
        return Reply(text="example")
    value = fill_schema(tool.get("input_schema") or {"type": "object"})
    return Reply(tool_input=value if isinstance(value, dict) else {})


# --------------------------------------------------------------------------------------------
# JSON Schema -> example value
# --------------------------------------------------------------------------------------------

_FORMAT_EXAMPLES = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00",
    "duration": "P1D",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
}


def fill_schema(schema: Any, *, root: Any = None) -> Any:
    """A value valid against ``schema`` (JSON Schema as pydantic v2's ``model_json_schema()`` writes it).

    Handles ``type`` (object, array, string, integer, number, boolean, null, or a list of them),
    ``const``, ``enum``, ``$ref`` (``#/$defs/...`` or any local JSON pointer), ``anyOf``/``oneOf``
    (first non-null branch), ``allOf``, ``properties``/``required``/``additionalProperties``,
    ``items``/``prefixItems``/``minItems``/``maxItems``/``uniqueItems``, ``minLength``/``maxLength``,
    common string ``format``\\s and numeric bounds. Every declared property is filled, arrays get
    ``max(minItems, 1)`` items, optionals a non-null value; inside a recursive ``$ref`` it switches to
    the smallest valid value (required properties only, ``minItems`` items, null where allowed).
    ``pattern`` is not honoured (strings are ``"example"``-like).
    """
    return _SchemaFiller(schema if root is None else root).fill(schema)


class _SchemaFiller:
    MAX_DEPTH = 64

    def __init__(self, root: Any) -> None:
        self.root = root
        self.active_refs: list[str] = []

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref are supported, not {ref!r}")
        node = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise ValueError(f"$ref {ref!r} does not resolve")
        return node

    def fill(self, schema: Any, depth: int = 0, minimal: bool = False, index: int = 0) -> Any:
        if depth > self.MAX_DEPTH:
            raise ValueError("schema nests too deep (a required, non-nullable recursion?)")
        if schema is True or schema is None:
            return "example" if index == 0 else f"example{index + 1}"
        if schema is False:
            raise ValueError("no value satisfies the schema `false`")
        if not isinstance(schema, dict):
            raise TypeError(f"not a JSON schema: {schema!r}")

        if "$ref" in schema:
            ref = schema["$ref"]
            recursive = ref in self.active_refs
            self.active_refs.append(ref)
            try:
                return self.fill(self.resolve(ref), depth + 1, minimal or recursive, index)
            finally:
                self.active_refs.pop()
        if "const" in schema:
            return json.loads(json.dumps(schema["const"]))
        if "enum" in schema:
            values = schema["enum"]
            if not values:
                raise ValueError("empty enum")
            return json.loads(json.dumps(values[index % len(values)]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = schema[key]
                concrete = [o for o in options if not _is_null_schema(o)]
                if not concrete or (minimal and len(concrete) < len(options)):
                    return None
                return self.fill(concrete[0], depth + 1, minimal, index)
        if "allOf" in schema:
            parts = [self.resolve(p["$ref"]) if isinstance(p, dict) and "$ref" in p else p for p in schema["allOf"]]
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            return self.fill(_merge_schemas([rest, *parts]), depth + 1, minimal, index)

        kind = schema.get("type")
        if isinstance(kind, list):
            concrete = [k for k in kind if k != "null"]
            if not concrete or (minimal and "null" in kind):
                return None
            kind = concrete[0]
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            elif "default" in schema:
                return json.loads(json.dumps(schema["default"]))
            else:
                kind = "string"

        if kind == "object":
            return self._object(schema, depth, minimal)
        if kind == "array":
            return self._array(schema, depth, minimal)
        if kind == "string":
            return _string(schema, index)
        if kind == "integer":
            return _integer(schema, index)
        if kind == "number":
            return _number(schema, index)
        if kind == "boolean":
            return index % 2 == 0
        if kind == "null":
            return None
        raise ValueError(f"unknown JSON schema type {kind!r}")

    def _object(self, schema: dict, depth: int, minimal: bool) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = list(schema.get("required") or [])
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if minimal and name not in required:
                continue
            out[name] = self.fill(sub, depth + 1, minimal)
        for name in required:
            if name not in out:
                out[name] = self.fill(extra if isinstance(extra, dict) else True, depth + 1, minimal)
        if not properties and isinstance(extra, dict):
            wanted = max(int(schema.get("minProperties", 0)), 0 if minimal else 1)
            for i in range(len(out), wanted):
                out["key" if i == 0 else f"key{i + 1}"] = self.fill(extra, depth + 1, minimal, i)
        return out

    def _array(self, schema: dict, depth: int, minimal: bool) -> list[Any]:
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", True)
        low = int(schema.get("minItems", 0))
        wanted = low if minimal else max(low, 1)
        if "maxItems" in schema:
            wanted = min(wanted, int(schema["maxItems"]))
        wanted = max(wanted, len(prefix)) if prefix else wanted
        out = [self.fill(sub, depth + 1, minimal, i) for i, sub in enumerate(prefix)]
        if items is False:
            return out
        for i in range(len(out), wanted):
            out.append(self.fill(items, depth + 1, minimal, i))
        return out


def _is_null_schema(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get("type") == "null" or schema.get("const", 0) is None)


def _merge_schemas(parts: list[Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties":
                merged.setdefault("properties", {}).update(value)
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _string(schema: dict, index: int) -> str:
    fmt = schema.get("format")
    if fmt in _FORMAT_EXAMPLES:
        value = _FORMAT_EXAMPLES[fmt]
    else:
        value = "example" if index == 0 else f"example{index + 1}"
    low = int(schema.get("minLength", 0))
    if len(value) < low:
        value = value + "x" * (low - len(value))
    if "maxLength" in schema:
        value = value[: int(schema["maxLength"])]
    return value


def _bounds(schema: dict) -> tuple[float | None, bool, float | None, bool]:
    low, low_open = schema.get("minimum"), False
    if schema.get("exclusiveMinimum") is not None and (low is None or schema["exclusiveMinimum"] >= low):
        low, low_open = schema["exclusiveMinimum"], True
    high, high_open = schema.get("maximum"), False
    if schema.get("exclusiveMaximum") is not None and (high is None or schema["exclusiveMaximum"] <= high):
        high, high_open = schema["exclusiveMaximum"], True
    return low, low_open, high, high_open


def _integer(schema: dict, index: int) -> int:
    low, low_open, high, high_open = _bounds(schema)
    lo = None if low is None else (math.floor(low) + 1 if low_open else math.ceil(low))
    hi = None if high is None else (math.ceil(high) - 1 if high_open else math.floor(high))
    value = (lo if lo is not None else (1 if hi is None or hi >= 1 else hi)) + index
    if hi is not None and value > hi:
        value = hi
    step = schema.get("multipleOf")
    if step:
        up = math.ceil(value / step) * step
        value = int(up if hi is None or up <= hi else math.floor(value / step) * step)
    return int(value)


def _number(schema: dict, index: int) -> float:
    low, low_open, high, high_open = _bounds(schema)
    if low is not None and high is not None:
        value = (low + high) / 2 if (low_open or high_open) else float(low)
    elif low is not None:
        value = low + (1.0 if low_open else 0.0) + index
    elif high is not None:
        value = min(1.0, high - 1.0 if high_open else high)
    else:
        value = 1.0 + index
    step = schema.get("multipleOf")
    if step:
        value = math.ceil(value / step) * step
    return float(value)


# --------------------------------------------------------------------------------------------
# the server
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One ``POST /v1/messages`` as the fake saw and answered it (secrets redacted)."""

    body: dict[str, Any]  # the parsed JSON object ({} when the body was not a JSON object)
    headers: dict[str, str]  # lower-case names; x-api-key/authorization values are "<redacted>"
    status: int  # what the fake answered
    retry_count: int  # x-stainless-retry-count, 0 if absent
    started: float  # time.monotonic() on arrival
    finished: float  # time.monotonic() just before the answer was written
    had_api_key: bool  # whether a key came with it (x-api-key, or Authorization: Bearer as the 2.x SDK sends it)
    usage: dict[str, int] | None = None  # the usage of a 200 answer (prompt cache tokens included)


#: decides a batch request's result type from its custom_id and params
BatchOutcomeRule = Callable[[str, dict[str, Any]], str]
BATCH_RESULT_TYPES = ("succeeded", "errored", "expired", "canceled")
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_BATCH_PATH = re.compile(r"^/v1/messages/batches/([^/]+)(/results)?$")
MESSAGES, COUNT_TOKENS = "POST /v1/messages", "POST /v1/messages/count_tokens"
BATCH_CREATE = "POST /v1/messages/batches"
BATCH_POLL, BATCH_RESULTS = "GET /v1/messages/batches/{id}", "GET /v1/messages/batches/{id}/results"
#: what ``FakeAnthropicServer.hits`` counts
ENDPOINTS = (MESSAGES, COUNT_TOKENS, BATCH_CREATE, BATCH_POLL, BATCH_RESULTS)


@dataclass
class FakeBatch:
    """One created message batch as the fake keeps it (params with secrets scrubbed)."""

    id: str
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, params) in request order
    created: float  # time.monotonic() at creation
    created_at: dt.datetime
    poll_times: list[float] = field(default_factory=list)  # time.monotonic() of each GET /v1/messages/batches/{id}
    results_reads: int = 0  # GET /v1/messages/batches/{id}/results
    results: list[dict[str, Any]] | None = field(default=None, repr=False)  # the JSONL lines, once ended
    ended_at: dt.datetime | None = None
    archived_at: dt.datetime | None = None  # set by FakeAnthropicServer.archive: the results are gone

    @property
    def polls(self) -> int:
        return len(self.poll_times)

    @property
    def custom_ids(self) -> list[str]:
        return [custom_id for custom_id, _ in self.requests]

    def wire(self, base_url: str) -> dict[str, Any]:
        """The batch object of the Message Batches API."""
        counts = dict.fromkeys(BATCH_RESULT_TYPES, 0)
        for line in self.results or []:
            counts[line["result"]["type"]] += 1
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": "ended" if self.results is not None else "in_progress",
            "request_counts": {"processing": 0 if self.results is not None else len(self.requests), **counts},
            "created_at": self.created_at.isoformat(),
            "expires_at": (self.created_at + dt.timedelta(hours=24)).isoformat(),
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "archived_at": self.archived_at.isoformat() if self.archived_at else None,
            "cancel_initiated_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results"
            if self.results is not None and self.archived_at is None else None,
        }


class _Answer:
    __slots__ = ("status", "headers", "payload")

    def __init__(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.status, self.payload, self.headers = status, payload, headers or {}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> _Answer:
    body = {"type": "error", "error": {"type": _error_type(status), "message": message}}
    return _Answer(status, json.dumps(body).encode(), headers)


class FakeAnthropicServer:
    """A threaded HTTP server on 127.0.0.1 that answers like the Messages API (see module doc).

    ``responder``, ``latency``, ``fail_rate``, ``fail_status``, ``retry_after_ms``, ``fail_next``,
    ``batch_delay`` and ``batch_outcome`` may be changed while it runs.
    """

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0, fail_rate: float = 0.0,
                 fail_status: int = 529, seed: int = 0, retry_after_ms: int = 5, batch_delay: float = 0.0,
                 batch_outcome: BatchOutcomeRule | None = None, cache_ttl: float = 300.0,
                 cache_min_tokens: Callable[[str], int] | None = None,
                 cache_clock: Callable[[], float] = time.monotonic, revoked_keys: Collection[str] = ()) -> None:
        self.responder: Responder | None = responder
        self.revoked_keys = set(revoked_keys)  # refused with a 401 on every endpoint
        self.cache_ttl = cache_ttl
        self.cache_min_tokens: Callable[[str], int] = cache_min_tokens or min_cacheable_tokens
        self.cache_clock = cache_clock  # what the time to live is measured on (a test may step it)
        self._prompt_cache: dict[str, float] = {}  # prefix key -> expiry (on cache_clock)
        self.batch_delay = batch_delay
        self.batch_outcome = batch_outcome
        self._batches: dict[str, FakeBatch] = {}
        self.latency = latency
        self.fail_rate = fail_rate
        self.fail_status = fail_status
        self.seed = seed
        self.retry_after_ms = retry_after_ms
        self.fail_next: list[int] = []
        self.hold: threading.Barrier | None = None  # every POST /v1/messages meets at it (see module doc)
        self._hits = dict.fromkeys(ENDPOINTS, 0)
        self.errors: list[BaseException] = []  # exceptions raised by the responder
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._records: list[tuple[int, RecordedRequest]] = []
        self._arrivals = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()

    # -- configuration --------------------------------------------------------------------

    @property
    def fail_rate(self) -> float:
        return self._fail_rate

    @fail_rate.setter
    def fail_rate(self, value: float) -> None:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"fail_rate must be in [0, 1], not {value}")
        self._fail_rate = float(value)

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeAnthropicServer:
        if self._httpd is not None:
            return self
        self._stopping = threading.Event()
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self)
        self._httpd, self._port = httpd, httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=f"fake-anthropic-{self._port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()  # wakes requests sleeping on `latency`
        if self.hold is not None:
            self.hold.abort()  # and those waiting at the barrier
        httpd.shutdown()
        with self._lock:
            connections, handlers = list(self._connections), list(self._handler_threads)
        for connection in connections:  # ends keep-alive connections the client still holds
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        deadline = time.monotonic() + 2
        for handler in handlers:
            handler.join(timeout=max(0.0, deadline - time.monotonic()))
        self._httpd = self._thread = None

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("the fake server has not been started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self._httpd is not None

    def __repr__(self) -> str:
        where = f"http://127.0.0.1:{self._port}" if self._port else "not started"
        return f"FakeAnthropicServer({where}, requests={len(self._records)})"

    # -- what happened --------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the answered ``POST /v1/messages`` requests, in arrival order."""
        with self._lock:
            return [record for _, record in self._records]

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def batches(self) -> list[FakeBatch]:
        """Every created message batch, in creation order (kept across ``reset``, like the real API's)."""
        with self._lock:
            return list(self._batches.values())

    def archive(self, batch_id: str) -> None:
        """Age a batch past the API's 29 days: it reports ``archived_at`` and its results are gone."""
        with self._lock:
            self._batches[batch_id].archived_at = dt.datetime.now(dt.timezone.utc)

    def count(self, *, status: int | None = None) -> int:
        with self._lock:
            return sum(1 for _, r in self._records if status is None or r.status == status)

    def hits(self, endpoint: str) -> int:
        """The requests that reached ``endpoint`` (one of ``ENDPOINTS``), whatever their answer."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"{endpoint!r} is not one of {ENDPOINTS}")
        with self._lock:
            return self._hits[endpoint]

    def prompt_cache_clear(self) -> None:
        with self._lock:
            self._prompt_cache.clear()

    def reset(self) -> None:
        """Forget recorded requests and errors, reset ``max_in_flight`` and re-seed the fault draws.

        ``fail_next`` and the configuration are left as they are.
        """
        with self._lock:
            self._records.clear()
            self._hits = dict.fromkeys(ENDPOINTS, 0)
            self.errors.clear()
            self._max_in_flight = self._in_flight
            self._rng = random.Random(self.seed)

    # -- request handling (runs on handler threads) ---------------------------------------

    def _register(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)
            self._handler_threads.add(threading.current_thread())

    def _hit(self, endpoint: str) -> None:
        with self._lock:
            self._hits[endpoint] += 1

    def _unregister(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)
            self._handler_threads.discard(threading.current_thread())

    def _messages(self, raw_headers: Mapping[str, str], payload: bytes) -> _Answer:
        headers = {name.lower(): value for name, value in raw_headers.items()}
        api_key = _api_key(headers)
        body, problem = _parse_object(payload)
        if problem is None:
            problem = _invalid_messages_request(body)
        try:
            retry_count = int(headers.get("x-stainless-retry-count", 0))
        except ValueError:
            retry_count = 0

        with self._lock:  # arrival: order, in-flight count and the fault draw, all at once
            arrival = self._arrivals
            self._arrivals += 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            started = time.monotonic()
            injected = None
            if api_key and api_key not in self.revoked_keys and problem is None:
                injected = self.fail_next.pop(0) if self.fail_next else None
                if injected is None:
                    if self._rng.random() < self._fail_rate:
                        injected = self.fail_status
                elif injected < 400:
                    injected = None  # a "pass" entry
        answer = _error(500, "the fake server failed")
        try:
            if (hold := self.hold) is not None:
                try:
                    hold.wait(timeout=10)
                except threading.BrokenBarrierError:
                    pass
            if self.latency > 0:
                self._stopping.wait(self.latency)
            if (refused := self._refused(api_key)) is not None:
                answer = refused
            elif problem is not None:
                answer = _error(400, problem)
            elif injected is not None:
                answer = _error(injected, f"injected failure ({injected})",
                                {"retry-after-ms": str(self.retry_after_ms)})
            else:
                answer = self._respond(body)
        finally:
            with self._lock:
                self._in_flight -= 1
                record = RecordedRequest(
                    body=_scrub(body, api_key),
                    headers=_redact_headers(headers, api_key),
                    status=answer.status,
                    retry_count=retry_count,
                    started=started,
                    finished=time.monotonic(),
                    had_api_key=bool(api_key),
                    usage=_usage(answer),
                )
                bisect.insort(self._records, (arrival, record), key=lambda item: item[0])
        return answer

    def _respond(self, body: dict[str, Any]) -> _Answer:
        try:
            reply = (self.responder or schema_filler)(body)
            if isinstance(reply, dict):
                reply = Reply(tool_input=reply)
            elif isinstance(reply, str):
                reply = Reply(text=reply)
            elif not isinstance(reply, Reply):
                raise TypeError(f"a responder returns a Reply, not {type(reply).__name__}")
            if reply.raw_body is not None:
                return _Answer(200, reply.raw_body.encode())
            if reply.tool_input is not None:
                tool = _chosen_tool(body)
                if tool is None:
                    raise ValueError("Reply(tool_input=...) answers a request that has no tools")
                block: dict[str, Any] = {"type": "tool_use", "id": _new_id("toolu"), "name": tool["name"],
                                         "input": reply.tool_input}
                output, stop_reason = json.dumps(reply.tool_input), "tool_use"
            else:
                block = {"type": "text", "text": reply.text}
                output, stop_reason = reply.text or "", "end_turn"
            message = {
                "id": _new_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [block],
                "stop_reason": reply.stop_reason or stop_reason,
                "stop_sequence": None,
                "usage": {
                    **self._prompt_cache_usage(body, reply.input_tokens if reply.input_tokens is not None
                                               else input_tokens_of(body)),
                    "output_tokens": reply.output_tokens if reply.output_tokens is not None
                    else max(1, len(output) // 4),
                },
            }
            return _Answer(200, json.dumps(message).encode())
        except Exception as exc:  # a bug in the test's responder: say so, and do not let the SDK retry
            with self._lock:
                self.errors.append(exc)
            return _error(500, f"responder raised {type(exc).__name__}: {exc}", {"x-should-retry": "false"})

    def _prompt_cache_usage(self, body: dict[str, Any], total: int) -> dict[str, int]:
        """``total`` input tokens split into uncached, written to and read from the prompt cache."""
        minimum = self.cache_min_tokens(body["model"])
        points = [(key, tokens) for key, tokens in _breakpoints(body) if tokens >= minimum]
        now = self.cache_clock()
        with self._lock:
            read = max((tokens for key, tokens in points if self._prompt_cache.get(key, 0.0) > now), default=0)
            for key, _ in points:
                self._prompt_cache[key] = now + self.cache_ttl
        read = min(read, total)
        written = min(max((tokens for _, tokens in points), default=0) - read, total - read) if points else 0
        return {"input_tokens": total - read - written, "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read}

    def _refused(self, api_key: str) -> _Answer | None:
        """The 401 of a request without a key or with a revoked one; None for an accepted key."""
        if not api_key:
            return _error(401, "x-api-key header is required")
        return _error(401, "invalid x-api-key") if api_key in self.revoked_keys else None

    def _count_tokens(self, raw_headers: Mapping[str, str], payload: bytes) -> _Answer:
        if (refused := self._refused(_api_key({name.lower(): value for name, value in raw_headers.items()}))):
            return refused
        body, problem = _parse_object(payload)
        if problem is None:
            if not isinstance(body.get("model"), str) or not body["model"]:
                problem = "model: Field required"
            elif not isinstance(body.get("messages"), list) or not body["messages"]:
                problem = "messages: Field required"
        if problem is not None:
            return _error(400, problem)
        return _Answer(200, json.dumps({"input_tokens": input_tokens_of(body)}).encode())


    # -- message batches --------------------------------------------------------------------

    def _create_batch(self, raw_headers: Mapping[str, str], payload: bytes) -> _Answer:
        api_key = _api_key({name.lower(): value for name, value in raw_headers.items()})
        if (refused := self._refused(api_key)):
            return refused
        body, problem = _parse_object(payload)
        requests = body.get("requests")
        if problem is None and (not isinstance(requests, list) or not requests):
            problem = "requests: a non-empty list of requests is required"
        seen: set[str] = set()
        for index, request in enumerate(requests if problem is None else []):
            custom_id = request.get("custom_id") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                problem = f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            elif custom_id in seen:
                problem = f"requests.{index}.custom_id: {custom_id!r} is not unique within the batch"
            elif not isinstance(params, dict):
                problem = f"requests.{index}.params: Input should be a valid dictionary"
            elif (invalid := _invalid_messages_request(params)) is not None:
                problem = f"requests.{index}.params.{invalid}"
            if problem is not None:
                break
            seen.add(custom_id)
        if problem is not None:
            return _error(400, problem)
        batch = FakeBatch(_new_id("msgbatch"), [(r["custom_id"], _scrub(r["params"], api_key)) for r in requests],
                          time.monotonic(), dt.datetime.now(dt.timezone.utc))
        with self._lock:
            self._batches[batch.id] = batch
        return _Answer(200, json.dumps(batch.wire(self.base_url)).encode())

    def _batch(self, raw_headers: Mapping[str, str], batch_id: str, results: bool) -> _Answer:
        if (refused := self._refused(_api_key({name.lower(): value for name, value in raw_headers.items()}))):
            return refused
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is not None and results:
                batch.results_reads += 1
            elif batch is not None:
                batch.poll_times.append(time.monotonic())
        if batch is None:
            return _error(404, f"message batch {batch_id} not found")
        if not results:
            if batch.results is None and time.monotonic() >= batch.created + self.batch_delay:
                self._end(batch)
            return _Answer(200, json.dumps(batch.wire(self.base_url)).encode())
        if batch.archived_at is not None:
            return _error(404, f"message batch {batch_id} is archived; its results are no longer available")
        if batch.results is None:
            return _error(400, f"message batch {batch_id} is still in progress; its results are not ready")
        lines = "".join(json.dumps(line) + "\n" for line in reversed(batch.results))
        return _Answer(200, lines.encode(), {"content-type": "application/binary"})

    def _end(self, batch: FakeBatch) -> None:
        """Every request's result, decided once (outside the lock: the responder may be slow)."""
        lines = []
        for custom_id, params in batch.requests:
            kind = (self.batch_outcome or (lambda *_: "succeeded"))(custom_id, params)
            if kind not in BATCH_RESULT_TYPES:
                raise ValueError(f"batch_outcome returned {kind!r}, not one of {BATCH_RESULT_TYPES}")
            result: dict[str, Any] = {"type": kind}
            if kind == "succeeded":
                answer = self._respond(params)
                try:
                    message = json.loads(answer.payload)
                except ValueError:
                    message = {"type": "error", "error": {"type": "api_error", "message": "unreadable answer"}}
                if answer.status == 200 and message.get("type") == "message":
                    result["message"] = message
                else:
                    result = {"type": "errored", "error": message}
            elif kind == "errored":
                result["error"] = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            lines.append({"custom_id": custom_id, "result": result})
        with self._lock:
            if batch.results is None:
                batch.results, batch.ended_at = lines, dt.datetime.now(dt.timezone.utc)


def _plain(value: Any) -> Any:
    """``value`` without any ``cache_control`` key."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def input_tokens_of(body: Mapping[str, Any]) -> int:
    """The fake's token count of a request: a token per 4 characters of its JSON, cache markers excluded."""
    return max(1, len(json.dumps(_plain(body))) // 4)


def min_cacheable_tokens(model: str) -> int:
    """The real API's shortest cacheable prompt: 2048 tokens for Haiku-class models, 1024 for the others."""
    return 2048 if "haiku" in model else 1024


def _blocks(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Every block of a request in cache order (tools, system, messages), each with where it is."""
    blocks: list[tuple[str, Any]] = [("tools", tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append(("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        blocks.extend(("system", block) for block in system)
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        role = message.get("role") if isinstance(message, dict) else None
        if isinstance(content, str):
            blocks.append(("messages", {"role": role, "type": "text", "text": content}))
        elif isinstance(content, list):
            blocks.extend(("messages", {"role": role, **block}) for block in content if isinstance(block, dict))
    return blocks


def _breakpoints(body: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(cache key, prefix tokens) at each block with ``cache_control``, in order."""
    blocks = _blocks(body)
    points = []
    for end, (where, block) in enumerate(blocks):
        if not isinstance(block, dict) or "cache_control" not in block:
            continue
        prefix = [_plain(b) for _, b in blocks[: end + 1]]
        text = json.dumps(prefix, sort_keys=True)
        keyed = [body.get("model"), text, body.get("tool_choice") if where == "messages" else None]
        points.append((hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest(), len(text) // 4))
    return points


def _usage(answer: _Answer) -> dict[str, int] | None:
    if answer.status != 200:
        return None
    try:
        usage = json.loads(answer.payload).get("usage")
    except (ValueError, AttributeError):
        return None
    return usage if isinstance(usage, dict) else None


def _api_key(headers: Mapping[str, str]) -> str:
    """The caller's API key: ``x-api-key``, else an ``Authorization: Bearer`` token ("" if neither).

    anthropic 2.x sends ``api_key`` as ``Authorization: Bearer <key>``, older SDKs as ``x-api-key``.
    """
    key = (headers.get("x-api-key") or "").strip()
    if key:
        return key
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _parse_object(payload: bytes) -> tuple[dict[str, Any], str | None]:
    try:
        body = json.loads(payload or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        return {}, f"The request body is not valid JSON: {exc}"
    if not isinstance(body, dict):
        return {}, "The request body must be a JSON object"
    return body, None


def _invalid_messages_request(body: dict[str, Any]) -> str | None:
    """The real API's 400 message for a request it would reject, or None."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required" if "model" not in body else "model: Input should be a valid string"
    max_tokens = body.get("max_tokens")
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        return "max_tokens: Input should be a valid integer"
    if max_tokens < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    messages = body.get("messages")
    if "messages" not in body:
        return "messages: Field required"
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"
    if body.get("stream"):
        return "stream: streaming is not supported by the fake server"
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return "tools: Input should be a valid list"
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("tool", "any") and not tools:
        return "tool_choice: tool_choice may only be specified while providing tools"
    if isinstance(choice, dict) and choice.get("type") == "tool":
        names = {t.get("name") for t in tools or [] if isinstance(t, dict)}
        if choice.get("name") not in names:
            return f"tool_choice.name: tool {choice.get('name')!r} is not among the request's tools"
    return None


def _redact_headers(headers: dict[str, str], secret: str) -> dict[str, str]:
    out = {}
    for name, value in headers.items():
        if name in _SECRET_HEADERS:
            out[name] = REDACTED
        elif secret and secret in value:
            out[name] = value.replace(secret, REDACTED)
        else:
            out[name] = value
    return out


def _scrub(value: Any, secret: str) -> Any:
    """``value`` with every occurrence of ``secret`` in its strings replaced (copies only if needed)."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, REDACTED) if secret in value else value
    if isinstance(value, dict):
        return {_scrub(k, secret): _scrub(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secret) for v in value]
    return value


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 fake: FakeAnthropicServer) -> None:
        self.fake = fake
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can be slow
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[0], self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):  # the client (or stop()) closed the connection
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API
    server_version = "fake-anthropic"
    sys_version = ""
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._register(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._unregister(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, answer: _Answer) -> None:
        try:
            self.send_response(answer.status, _REASONS.get(answer.status))
            self.send_header("content-type", answer.headers.get("content-type", "application/json"))
            self.send_header("content-length", str(len(answer.payload)))
            self.send_header("request-id", _new_id("req"))
            for name, value in answer.headers.items():
                if name != "content-type":
                    self.send_header(name, value)
            self.end_headers()
            self.wfile.write(answer.payload)
        except OSError:
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802
        payload = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        fake = self.server.fake
        if path == "/v1/messages":
            fake._hit(MESSAGES)
            self._send(fake._messages(self.headers, payload))
        elif path == "/v1/messages/count_tokens":
            fake._hit(COUNT_TOKENS)
            self._send(fake._count_tokens(self.headers, payload))
        elif path == "/v1/messages/batches":
            fake._hit(BATCH_CREATE)
            self._send(fake._create_batch(self.headers, payload))
        else:
            self._not_found(payload)

    def _not_found(self, payload: bytes | None = None) -> None:
        if payload is None:
            self._read_body()
        self._send(_error(404, f"{self.command} {self.path} is not served by the fake server"))

    def do_GET(self) -> None:  # noqa: N802
        batch = _BATCH_PATH.match(self.path.split("?", 1)[0].rstrip("/"))
        if batch is None:
            self._not_found()
            return
        results = batch.group(2) is not None
        self.server.fake._hit(BATCH_RESULTS if results else BATCH_POLL)
        self._send(self.server.fake._batch(self.headers, batch.group(1), results=results))

    def do_PUT(self) -> None:  # noqa: N802
        self._not_found()

    do_DELETE = do_PATCH = do_PUT
