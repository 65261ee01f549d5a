"""The HTTP adapter against real servers on 127.0.0.1: secret headers, a whole-request deadline, a body
cap, and every malformed field an item error naming it, while ``answer()`` itself always returns."""

from __future__ import annotations

import base64
import json
import time

import pytest

from rag_assets.defs.resources import RagSystemResource
from rag_assets.errors import ConfigError, redact
from rag_assets.rag.adapters import HttpRagSystem
from rag_assets.rag.http_transport import resolve_headers
from rag_assets.rag.models import RagQuery
from rag_assets.rag.system import config_hash
from rag_assets.store.engine import get_engine
from rag_assets.store.rag_repository import SqlRagRepository
from tests.fakes.rag_http import HUGE_BYTES, TOKEN, FakeRagHttpServer

TOKEN_ENV = "RAG_ASSETS_TEST_SYSTEM_TOKEN"
BEARER = {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"}
QUERIES = [RagQuery("i1", "What is the maximum file size?", "cv-test")]


@pytest.fixture(scope="module")
def server():
    with FakeRagHttpServer() as running:
        yield running


def _answer(server: FakeRagHttpServer, path: str, **options):
    system = HttpRagSystem(server.base_url + path, k=3, **{"timeout": 5.0, "retries": 0, **options})
    return system.answer(QUERIES)[0]


def _canned(server: FakeRagHttpServer, body: object) -> tuple[str | None, str | None]:
    server.canned = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = _answer(server, "/canned")
    return response.error_kind, response.error


def test_the_bearer_token_comes_from_the_environment_and_a_missing_or_wrong_one_is_a_401_item_error(server, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    answered = _answer(server, "/secure", headers=BEARER)
    assert answered.ok and answered.answer.startswith("Echo: What is the maximum") and answered.input_tokens == 10
    missing = _answer(server, "/secure")
    assert (missing.error_kind, missing.error) == ("http_error", 'HTTP 401: {"error": "bad or missing token"}')
    monkeypatch.setenv(TOKEN_ENV, "wrong-token")
    wrong = _answer(server, "/secure", headers=BEARER)
    assert (wrong.error_kind, wrong.error) == ("http_error", 'HTTP 401: {"error": "bad or missing token"}')


def test_the_token_value_is_in_no_config_error_or_stored_result(server, monkeypatch, tmp_path):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    system = HttpRagSystem(server.base_url + "/secure", headers={**BEARER, "X-Trace": f"${{{TOKEN_ENV}}}-suffix"},
                           timeout=0.5, retries=0)
    assert system.config()["headers"] == {"Authorization": f"Bearer ${{{TOKEN_ENV}}}",
                                          "X-Trace": f"${{{TOKEN_ENV}}}-suffix"}
    server.canned = json.dumps({"answer": f"leaked {TOKEN}", "usage": {"input_tokens": TOKEN}}).encode()
    canned = HttpRagSystem(server.base_url + "/canned", headers=BEARER, retries=0)
    unreachable = HttpRagSystem("http://127.0.0.1:9/", headers=BEARER, retries=0, timeout=0.5)
    responses = [one.answer([RagQuery(f"i{n}", "q?", "cv-test")])[0]
                 for n, one in enumerate((system, canned, unreachable))]
    assert [r.error_kind for r in responses] == [None, "bad_response", "http_error"]
    assert responses[1].error == "usage.input_tokens: expected int, got str"
    repository = SqlRagRepository(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    repository.save_run("cv-test", 1, system.name, config_hash(system), system.config(), responses,
                        {"i0": 1, "i1": 1, "i2": 1})
    shown = json.dumps([system.config(), canned.config(), unreachable.config(), [r.error for r in responses]])
    assert TOKEN not in shown and TOKEN_ENV in shown
    assert TOKEN.encode() not in (tmp_path / "store.db").read_bytes()


def test_an_error_message_that_echoes_the_secret_shows_stars(server, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    server.canned = json.dumps({"answer": "x", "usage": {"cost_usd": -1, "input_tokens": 1}}).encode()
    system = HttpRagSystem(server.base_url + "/canned", headers={"X-Api-Key": f"${{{TOKEN_ENV}}}"}, retries=0)
    assert system.answer(QUERIES)[0].error == "usage.cost_usd: expected a number >= 0, got -1"
    system.url = server.base_url + "/echo-auth"
    assert system.answer(QUERIES)[0].error == 'HTTP 403: {"got": "***"}'


def test_a_secret_cut_short_by_the_200_character_error_excerpt_shows_stars_not_its_head(server, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "k" * 300)
    system = HttpRagSystem(server.base_url + "/echo-auth", headers={"X-Api-Key": f"${{{TOKEN_ENV}}}"}, retries=0)
    assert system.answer(QUERIES)[0].error == 'HTTP 403: {"got": "***"}'


ECHOED = "s3cr3t-TOKEN-98765"


@pytest.mark.parametrize(("authorization", "hidden"), [
    (f"Bearer {ECHOED}", [ECHOED]),  # as --system-header Authorization=VAR sends a VAR holding the whole value
    ("Basic " + base64.b64encode(f"alice:{ECHOED}".encode()).decode(), [ECHOED, f"alice:{ECHOED}"]),
])
def test_every_form_of_a_secret_header_a_server_echoes_shows_stars_in_errors_and_answers(
        server, monkeypatch, authorization, hidden):
    monkeypatch.setenv("TEAM_TOKEN", authorization)
    monkeypatch.setenv("TEAM_KEY", "K-team-4411")
    system = HttpRagSystem(server.base_url + "/echo-headers", headers={"Authorization": "${TEAM_TOKEN}",
                                                                       "X-Api-Key": "${TEAM_KEY}"}, retries=0)
    answered, refused = system.answer([RagQuery("i1", "q?", "cv-test"), RagQuery("i2", "q?", "cv-test")])
    decoded = " decoded=*** pw=***" if authorization.startswith("Basic") else " decoded= pw="
    assert refused.error == f"HTTP 401: bad token *** for user; X-Api-Key=*** raw=***{decoded} json=*** url=***"
    assert (answered.answer, answered.retrieved[0].text) == ("ok, you are ***", "totally unrelated text ***")
    assert answered.extra["secret_blanked"] is True
    shown = repr([refused, answered])
    assert [secret for secret in [authorization, "K-team-4411", *hidden] if secret in shown] == []


def test_a_token_a_server_echoes_json_escaped_or_url_encoded_shows_stars_in_errors(server, monkeypatch):
    token = "ab/cd+ef==Zq9"
    monkeypatch.setenv("TEAM_TOKEN", f"Bearer {token}")
    system = HttpRagSystem(server.base_url + "/echo-headers", headers={"Authorization": "${TEAM_TOKEN}"}, retries=0)
    refused = system.answer([RagQuery("i2", "q?", "cv-test")])[0]
    assert refused.error == "HTTP 401: bad token *** for user; X-Api-Key=None raw=*** decoded= pw= json=*** url=***"
    assert redact('{"auth": "Bearer ab\\/cd+ef==Zq9", "t": "ab%2Fcd%2Bef%3D%3DZq9"}', (f"Bearer {token}",)) == (
        '{"auth": "***", "t": "***"}')


def test_a_header_that_is_no_credential_and_words_holding_a_password_leave_scored_texts_as_the_server_sent_them(
        server, monkeypatch, tmp_path):
    """What is scored (answer, retrieved texts, claims) keeps every word a credential is not: a tenant named "docs"
    is a word of the corpus, and so are "passwords" and "passwordless", which hold the Basic password "password"
    but are other words; the password as a whole word and the whole credential are blanked, and that is noted."""
    monkeypatch.setenv("TENANT", "docs")
    monkeypatch.setenv("TEAM_BASIC", base64.b64encode(b"admin:password").decode())
    system = HttpRagSystem(server.base_url + "/canned", headers={"X-Tenant": "${TENANT}",
                                                                  "Authorization": "Basic ${TEAM_BASIC}"}, retries=0)
    text = "See the docs page on passwords and passwordless sign-in."
    server.canned = json.dumps({"answer": text, "retrieved": [{"text": text}],
                                "citations": [{"claim": text, "chunk_id": "c1"}]}).encode()
    answered = system.answer(QUERIES)[0]
    assert (answered.answer, answered.retrieved[0].text, answered.citations[0].claim) == (text, text, text)
    assert "secret_blanked" not in answered.extra
    server.canned = json.dumps({"answer": "log in as admin:password, see the docs"}).encode()
    assert system.answer(QUERIES)[0].answer == "log in as ***, see the docs"
    server.canned = json.dumps({"answer": "your password is password (see passwords)"}).encode()
    assert system.answer(QUERIES)[0].answer == "your *** is *** (see passwords)"
    assert redact("HTTP 401: password wrong", system._secrets) == "HTTP 401: *** wrong"  # errors stay broad
    assert resolve_headers({"X-Tenant": "${TENANT}", "X-Upstream": "Bearer ${UP}", "X-Id": "${TEAM_KEY}"},
                           {"TENANT": "docs", "UP": "up-4411", "TEAM_KEY": "k-77"})[1] == ("Bearer up-4411", "up-4411", "k-77")


def test_a_basic_password_of_letters_only_a_server_quotes_in_a_200_answer_is_blanked_where_it_stands_whole(
        server, monkeypatch):
    """A passphrase is all letters, as a word is: quoted whole it shows stars in the answer, retrieved texts and
    claims; a longer word holding it, and its words apart, stay as the server sent them."""
    monkeypatch.setenv("TEAM_BASIC", base64.b64encode(b"alice:correcthorsebattery").decode())
    system = HttpRagSystem(server.base_url + "/canned", headers={"Authorization": "Basic ${TEAM_BASIC}"}, retries=0)
    text = ('Signed in with correcthorsebattery ("correcthorsebattery"); '
            "correcthorsebatterystaple and a correct horse battery are other words.")
    server.canned = json.dumps({"answer": text, "retrieved": [{"text": text}],
                                "citations": [{"claim": text, "chunk_id": "c1"}]}).encode()
    answered = system.answer(QUERIES)[0]
    shown = 'Signed in with *** ("***"); correcthorsebatterystaple and a correct horse battery are other words.'
    assert (answered.answer, answered.retrieved[0].text, answered.citations[0].claim) == (shown, shown, shown)
    assert answered.extra["secret_blanked"] is True
    short = ("Basic " + base64.b64encode(b"alice:horse").decode(),)  # under 6 characters: kept, as before
    assert redact("a horse", short, in_reply=True) == "a horse"


def test_a_piece_of_a_secret_too_short_to_tell_from_a_word_is_kept_but_a_short_secret_as_given_is_not():
    assert redact("Bearer abc: abc is fine", ("Bearer abc",)) == "***: abc is fine"
    assert redact("raw=abc", ("abc",)) == "raw=***"
    assert redact("pw=hunter2 user=alice", ("Basic " + base64.b64encode(b"alice:hunter2").decode(),)) == (
        "pw=*** user=alice")


def test_secret_headers_must_name_an_env_var_that_is_set(monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(ConfigError, match=f"header Authorization: environment variable {TOKEN_ENV} is not set"):
        HttpRagSystem("http://127.0.0.1:9/", headers=BEARER)
    with pytest.raises(ConfigError, match=r"header X-Api-Key: a credential must come from an environment variable"):
        HttpRagSystem("http://127.0.0.1:9/", headers={"X-Api-Key": "literal-secret"})
    assert resolve_headers({"X-Team": "search", "Authorization": "Bearer ${A}${B}"}, {"A": "aa", "B": "bbb"}) == (
        {"X-Team": "search", "Authorization": "Bearer aabbb"}, ("Bearer aabbb", "bbb", "aa"))


def test_the_rag_resource_passes_header_templates_and_the_cap(monkeypatch, tmp_path):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    resource = RagSystemResource(kind="http", target="http://127.0.0.1:9/rag", headers=BEARER, max_response_bytes=1000)
    system = resource.system("cv-test", [], None, None, tmp_path)
    assert system.config() == {"kind": "http", "url": "http://127.0.0.1:9/rag", "k": 5, "timeout": 30.0,
                               "retries": 2, "max_response_bytes": 1000, "headers": BEARER}
    assert TOKEN not in json.dumps(resource.model_dump())


def test_a_server_that_drips_a_byte_every_two_seconds_fails_at_the_deadline(server):
    started = time.monotonic()
    response = _answer(server, "/drip", timeout=3.0)
    elapsed = time.monotonic() - started
    assert (response.error_kind, response.error) == ("timeout", "no answer within 3 s")
    # one deadline for the whole answer: 18 bytes dripped 2 s apart would take 36 s, and a timeout per read
    # (2 s < 3 s) would never fire; the upper bound leaves room for a loaded machine
    assert 2.0 <= elapsed <= 15.0, elapsed
    assert 0 < response.latency_ms / 1000 <= 15.0


@pytest.mark.parametrize("path", ["/huge", "/huge-undeclared"])
def test_a_50_mb_body_is_cut_at_the_cap(server, path):
    started = time.monotonic()
    response = _answer(server, path, timeout=30.0)
    assert response.error_kind == "bad_response"
    if path == "/huge":  # the declared length is refused before any of the body is read
        assert response.error == f"response: body of {HUGE_BYTES} bytes is over the 5000000-byte cap"
    else:
        assert response.error == "response: body cut at the 5000000-byte cap"
    assert time.monotonic() - started < 10
    time.sleep(0.2)
    assert server.sent.get(path, 0) < HUGE_BYTES / 2, "the client stopped reading, the server could not send it all"


def test_the_cap_is_configurable():
    assert HttpRagSystem("http://127.0.0.1:9/", max_response_bytes=100).config()["max_response_bytes"] == 100


@pytest.mark.parametrize(("body", "error"), [
    ({"retrieved": []}, "answer: missing"),
    ({"answer": None}, 'answer: null; a decline is "declined": true or an empty answer with a "reason"'),
    ({"answer": ""}, 'answer: empty; a decline is "declined": true or an empty answer with a "reason"'),
    ({"answer": "", "declined": False, "reason": "no docs"}, 'answer: empty while "declined" is false'),
    ({"answer": ["a"]}, "answer: expected str, got list"),
    ({"answer": "a", "declined": "yes"}, "declined: expected bool, got str"),
    ({"answer": "", "reason": 3}, "reason: expected str, got int"),
    ({"answer": "a", "usage": {"input_tokens": 12.5}}, "usage.input_tokens: expected int, got float"),
    ({"answer": "a", "usage": {"output_tokens": "7"}}, "usage.output_tokens: expected int, got str"),
    ({"answer": "a", "usage": {"output_tokens": True}}, "usage.output_tokens: expected int, got bool"),
    ({"answer": "a", "usage": {"input_tokens": -1}}, "usage.input_tokens: expected a count from 0 to 2147483647, got -1"),
    ({"answer": "a", "usage": {"input_tokens": 10**40}},
     f"usage.input_tokens: expected a count from 0 to 2147483647, got {str(10**40)[:40]}"),
    ({"answer": "a", "usage": {"cost_usd": "0.01"}}, "usage.cost_usd: expected int or float, got str"),
    ({"answer": "a", "usage": {"cost_usd": 10**400}}, f"usage.cost_usd: expected a finite number, got {str(10**400)[:40]}"),
    ({"answer": "a", "usage": [1]}, "usage: expected dict, got list"),
    ({"answer": "a", "citations": {"claim": "x"}}, "citations: expected list, got dict"),
    ({"answer": "a", "citations": [{"claim": "x", "chunk_id": 5}]}, "citations[0].chunk_id: expected str, got int"),
    (["answer"], "response: expected dict, got list"),
    (b'{"answer": "a", "usage": {"cost_usd": NaN}}', "usage.cost_usd: expected a finite number, got nan"),
    (b'{"answer": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "response: JSON nesting too deep"),
    (b'{"answer": "trunc', "response: not JSON: Unterminated string starting at: line 1 column 12 (char 11)"),
    (b'{"answer": "\xff"}', "response: not JSON: 'utf-8' codec can't decode byte 0xff in position 12: invalid start byte"),
])
def test_each_malformed_field_is_an_item_error_naming_it(server, body, error):
    assert _canned(server, body) == ("bad_response", error)


@pytest.mark.parametrize(("body", "answer", "extra"), [
    ({"answer": "", "reason": "not in the documentation"}, "", {"declined": True, "reason": "not in the documentation"}),
    ({"answer": None, "declined": True}, "", {"declined": True}),
    ({"declined": True}, "", {"declined": True}),
    ({"answer": "I cannot say.", "declined": True}, "I cannot say.", {"declined": True}),
    ({"answer": "15 GB.", "usage": {"input_tokens": 3, "output_tokens": 2, "cost_usd": 0}}, "15 GB.", {"declined": False}),
])
def test_an_explicit_decline_is_recorded_as_the_reference_system_records_one(server, body, answer, extra):
    server.canned = json.dumps(body).encode()
    response = _answer(server, "/canned")
    assert (response.ok, response.answer, response.extra) == (True, answer, extra)
