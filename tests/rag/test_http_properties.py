"""Property: whatever body an endpoint sends, the HTTP adapter returns a parsed response or an item
error naming a field; no exception escapes ``answer()``. Real HTTP round trips on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.rag.adapters import HttpRagSystem
from rag_assets.rag.models import RagQuery
from tests.fakes.rag_http import FakeRagHttpServer

FIELDS = ("answer", "declined", "reason", "retrieved", "citations", "usage", "chunk_id", "id", "text", "source",
          "score", "claim", "input_tokens", "output_tokens", "cost_usd")
NUMBERS = st.integers(min_value=-(10**400), max_value=10**400) | st.integers() | st.floats()
SCALARS = (st.none() | st.booleans() | NUMBERS
           | st.text(max_size=20) | st.sampled_from(FIELDS))
JSONISH = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), inner, max_size=5), max_leaves=25)
CONTRACTISH = st.fixed_dictionaries({}, optional={
    "answer": st.none() | st.text(max_size=10) | JSONISH,
    "declined": st.booleans() | JSONISH,
    "reason": st.text(max_size=10) | JSONISH,
    "retrieved": st.lists(st.fixed_dictionaries({}, optional={
        "chunk_id": st.text(max_size=8) | JSONISH, "id": st.text(max_size=8) | JSONISH, "text": st.text(max_size=8) | JSONISH,
        "source": st.text(max_size=8) | JSONISH, "score": NUMBERS | JSONISH}), max_size=3) | JSONISH,
    "citations": st.lists(st.fixed_dictionaries({}, optional={"claim": JSONISH, "chunk_id": JSONISH}), max_size=2) | JSONISH,
    "usage": st.fixed_dictionaries({}, optional={key: NUMBERS | JSONISH for key in ("input_tokens", "output_tokens", "cost_usd")})
    | JSONISH,
})
BODIES = st.binary(max_size=200) | JSONISH.map(json.dumps).map(str.encode) | CONTRACTISH.map(json.dumps).map(str.encode)
VALID = {"answer": "15 GB.", "declined": False, "reason": "", "retrieved": [{"chunk_id": "c1", "score": 1.5, "text": "t"}],
         "citations": [{"claim": "15 GB", "chunk_id": "c1"}], "usage": {"input_tokens": 3, "output_tokens": 2, "cost_usd": 0.1}}
PATHS = [("answer",), ("declined",), ("reason",), ("retrieved",), ("retrieved", 0), ("retrieved", 0, "chunk_id"),
         ("retrieved", 0, "score"), ("retrieved", 0, "text"), ("citations",), ("citations", 0),
         ("citations", 0, "claim"), ("citations", 0, "chunk_id"), ("usage",), ("usage", "input_tokens"),
         ("usage", "output_tokens"), ("usage", "cost_usd")]
NAMED = re.compile(r"^(response|answer|declined|reason|retrieved|citations|usage)\b[\[\].\w]*: ")


@pytest.fixture(scope="module")
def server():
    with FakeRagHttpServer() as running:
        yield running


def _answer(server: FakeRagHttpServer, body: bytes):
    server.canned = body
    system = HttpRagSystem(server.base_url + "/canned", timeout=5.0, retries=0, max_concurrency=1)
    [response] = system.answer([RagQuery("i1", "q?", "cv")])
    if response.ok:
        assert isinstance(response.answer, str) and isinstance(response.extra["declined"], bool)
        assert response.answer or response.extra["declined"]
        assert 0 <= response.input_tokens < 2**31 and 0 <= response.output_tokens < 2**31
        assert response.cost_usd is None or 0 <= response.cost_usd < 1e300
    else:
        assert response.error_kind == "bad_response" and NAMED.match(response.error), response.error
    return response


def _path(path: tuple) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES)
def test_any_body_is_a_response_or_an_item_error_naming_a_field(server, body):
    _answer(server, body)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=NUMBERS | JSONISH)
def test_one_field_gone_wrong_in_a_valid_response_is_an_error_naming_that_field(server, path, value):
    body = json.loads(json.dumps(VALID))
    parent = body
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    response = _answer(server, json.dumps(body).encode())
    if not response.ok:  # the retrieved entries' own rules are the open contract's; the path is the field's
        named = path[0] if path[0] == "retrieved" else _path(path)
        assert response.error.startswith(named), (path, response.error)
