"""Plug in your own RAG system: a Python callable (``module:function``) or an HTTP endpoint.

Both speak one JSON contract. Request (a dict for the callable, the POST body for HTTP)::

    {"item_id": "q-…", "question": "…", "corpus_version": "cv-…", "k": 5}

Response::

    {"answer": "… [id] …",                                                         # a string, never null
     "declined": false,                                                          # optional
     "reason": "…",                                                              # optional, why it declined
     "retrieved": [{"chunk_id": "<snapshot id>", "score": 12.3},                   # best first; each entry
                   {"id": "<own id>", "text": "…", "source": "docs/a.md"},         # one of these three
                   {"text": "…"}, …],
     "citations": [{"claim": "…", "chunk_id": "<snapshot or own id>"}, …],         # optional
     "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}}             # optional

A decline is explicit: ``"declined": true`` (the answer may then be empty or null), or an empty
answer with a ``"reason"``. A null, missing or unexplained empty answer breaks the contract, so a
system that crashed into ``null`` is not scored as a polite decline.

A ``chunk_id`` is the snapshot's (``corpus_snapshot`` / the golden set's ``relevant_chunks``); a
context given by text is mapped onto the snapshot's chunks by the run (``rag_assets.rag.system``).
An exception, a timeout, a non-2xx answer after retries, a response that breaks the contract, or
snapshot chunk ids the snapshot lacks each become an error record for that item; the run goes on.
"""

from __future__ import annotations

import http.client
import importlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from rag_assets.errors import ConfigError, redact, redact_json
from rag_assets.rag.http_transport import (HEADERS_INSTEAD, HttpReply, ResponseTooLarge, post, refuse_url_credentials,
                                          resolve_headers)
from rag_assets.rag.models import Citation, RagQuery, RagResponse, RetrievedChunk, failed
from rag_assets.text.control import control_character_problem


DEFAULT_MAX_RESPONSE_BYTES = 5_000_000
FINITE_LIMIT = 1e300  # numbers beyond are garbage (and ints beyond float range cannot be scores)


class ContractError(ValueError):
    """A response that breaks the JSON contract; the message names the field."""


def _field(value: Any, kind: type | tuple[type, ...], where: str, optional: bool = False) -> Any:
    """``value`` if it is of ``kind`` (never a bool unless ``kind`` says bool; a float-typed number is finite)."""
    if value is None and optional:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in kinds:
        expected = " or ".join(k.__name__ for k in kinds)
        raise ContractError(f"{where}: expected {expected}, got {type(value).__name__}")
    if kind in (float, (int, float)) and not abs(value) < FINITE_LIMIT:  # NaN, infinities, ints no float holds
        raise ContractError(f"{where}: expected a finite number, got {repr(value)[:40]}")
    if isinstance(value, str) and (problem := control_character_problem(value)):  # the store could not hold it
        raise ContractError(f"{where}: {problem}")
    return value


def parse_retrieved(row: Any, rank: int) -> RetrievedChunk:
    """One ``retrieved`` entry (``rank`` from 1) by the open contract, or ContractError naming the field.

    ``{"chunk_id": <snapshot id>}``, ``{"text": str}`` or ``{"id": <own id>, "text": str}``, each
    optionally with ``"source"`` (document path relative to the corpus root) and ``"score"``. A
    text without a snapshot id is mapped onto the snapshot's chunks by the run.
    """
    where = f"retrieved[{rank - 1}]"
    _field(row, dict, where)
    chunk_id = _field(row.get("chunk_id"), str, f"{where}.chunk_id", optional=True)
    own_id = row.get("id")
    if own_id is not None:
        own_id = str(_field(own_id, (str, int), f"{where}.id"))
    text = _field(row.get("text"), str, f"{where}.text", optional=True) or ""
    source = _field(row.get("source"), str, f"{where}.source", optional=True)
    score = _field(row.get("score", 0.0), (int, float), f"{where}.score", optional=True)
    if not chunk_id and not text.strip():
        raise ContractError(f"{where}: give 'chunk_id' (a snapshot chunk id) or a non-empty 'text'")
    return RetrievedChunk(chunk_id or None, text, float(score or 0.0), rank, own_id=own_id, source=source,
                          mapping="chunk_id" if chunk_id else "unmapped")


def _answer(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The answer text and the decline marker (``extra``) the scorers read, as the reference system records it."""
    declined = _field(payload.get("declined", False), bool, "declined")
    reason = _field(payload.get("reason"), str, "reason", optional=True)
    answer = payload.get("answer")
    if answer is None and not declined:
        raise ContractError("answer: missing" if "answer" not in payload else
                            'answer: null; a decline is "declined": true or an empty answer with a "reason"')
    answer = _field(answer, str, "answer", optional=True) or ""
    if not answer and not declined:
        if "declined" in payload:
            raise ContractError('answer: empty while "declined" is false')
        if not reason:
            raise ContractError('answer: empty; a decline is "declined": true or an empty answer with a "reason"')
        declined = True
    return answer, {"declined": declined, **({"reason": reason} if reason else {})}


def _citations(payload: dict[str, Any]) -> tuple[Citation, ...]:
    citations = []
    for index, row in enumerate(_field(payload.get("citations") or [], list, "citations")):
        _field(row, dict, f"citations[{index}]")
        citations.append(Citation(_field(row.get("claim", ""), str, f"citations[{index}].claim"),
                                  _field(row.get("chunk_id"), str, f"citations[{index}].chunk_id")))
    return tuple(citations)


_MAX_COUNT = 2**31  # what the store's integer columns hold; a larger token count is garbage, not usage


def _count(value: Any, where: str) -> int:
    if not 0 <= _field(value, int, where) < _MAX_COUNT:
        raise ContractError(f"{where}: expected a count from 0 to {_MAX_COUNT - 1}, got {repr(value)[:40]}")
    return value


def _cost(value: Any, where: str) -> float | None:
    if _field(value, (int, float), where, optional=True) is None:
        return None
    if value < 0:
        raise ContractError(f"{where}: expected a number >= 0, got {value!r}")
    return float(value)


def _usage(payload: dict[str, Any]) -> dict[str, Any]:
    """Token counts are integers (never floats or strings); the cost is a number >= 0 or null (unknown)."""
    usage = _field(payload.get("usage") or {}, dict, "usage")
    return {"input_tokens": _count(usage.get("input_tokens", 0), "usage.input_tokens"),
            "output_tokens": _count(usage.get("output_tokens", 0), "usage.output_tokens"),
            "cost_usd": _cost(usage.get("cost_usd"), "usage.cost_usd")}


def parse_output(item_id: str, payload: Any, latency_ms: float) -> RagResponse:
    """A response dict to a RagResponse, or ContractError naming the first field that is wrong."""
    _field(payload, dict, "response")
    answer, extra = _answer(payload)
    retrieved = [parse_retrieved(row, rank)
                 for rank, row in enumerate(_field(payload.get("retrieved", []), list, "retrieved"), start=1)]
    return RagResponse(item_id=item_id, answer=answer, retrieved=tuple(retrieved), citations=_citations(payload),
                       latency_ms=latency_ms, extra=extra, **_usage(payload))


def answer_concurrently(one: Callable[[RagQuery], RagResponse], queries: Sequence[RagQuery], workers: int,
                        progress: Callable[[int, int], None] | None) -> list[RagResponse]:
    """``one`` over the queries, ``workers`` at a time, in order; ``progress(done, total)`` as each is answered."""
    done, lock = itertools.count(1), threading.Lock()

    def told(query: RagQuery) -> RagResponse:
        response = one(query)
        if progress is not None:
            with lock:
                progress(next(done), len(queries))
        return response

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(told, queries))


def _request(query: RagQuery, k: int) -> dict[str, Any]:
    return {"item_id": query.item_id, "question": query.question, "corpus_version": query.corpus_version, "k": k}


def load_target(target: str) -> Any:
    """The attribute a ``module:attribute`` target names (the module found on ``sys.path``)."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"a RAG system is given as 'module:function' (a chain or query engine as "
                          f"'module:attribute'), got {target!r}")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load RAG system {target!r}: {exc}") from exc


def load_built(target: str, kind: type, what: str) -> Any:
    """The ``kind`` object a ``module:attribute`` target names, or the one it builds when it is a function."""
    found = load_target(target)
    built = found() if callable(found) and not isinstance(found, kind) else found
    if not isinstance(built, kind):
        raise ConfigError(f"{target!r} is not {what} nor a function that returns one")
    return built


def load_callable(target: str) -> Callable[[dict[str, Any]], Any]:
    function = load_target(target)
    if not callable(function):
        raise ConfigError(f"{target!r} is not callable")
    return function


class CallableRagSystem:
    """Calls ``function(request_dict)`` per item, at most ``max_concurrency`` at once, each within ``timeout``.

    ``function`` defaults to the one ``target`` names; the framework adapters pass their own
    (a LangChain chain or LlamaIndex query engine wrapped to speak the contract) with their ``kind``.
    A call that overruns its timeout is recorded as such and abandoned (Python cannot stop a
    thread); its thread finishes in the background.
    """

    def __init__(self, target: str, k: int = 5, timeout: float = 30.0, max_concurrency: int = 4,
                 function: Callable[[dict[str, Any]], Any] | None = None, kind: str = "callable") -> None:
        self.name, self.target, self.k, self.timeout, self.kind = target, target, k, timeout, kind
        self.function = function or load_callable(target)
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self.max_concurrency = max_concurrency

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "k": self.k, "timeout": self.timeout}

    def _one(self, query: RagQuery) -> RagResponse:
        outcome: dict[str, Any] = {}
        started = time.perf_counter()

        def call() -> None:
            try:
                outcome["value"] = self.function(_request(query, self.k))
            except BaseException as exc:  # the user's code may raise anything; it becomes the item's error
                outcome["error"] = exc
            finally:
                self._slots.release()

        self._slots.acquire()
        worker = threading.Thread(target=call, daemon=True, name=f"rag-{query.item_id}")
        worker.start()
        worker.join(self.timeout)
        latency = (time.perf_counter() - started) * 1000
        if worker.is_alive():
            return failed(query.item_id, "timeout", f"no answer within {self.timeout:g} s", latency)
        if "error" in outcome:
            exc = outcome["error"]
            if isinstance(exc, ContractError):  # an adapter's wrapper found the framework's output unusable
                return failed(query.item_id, "bad_response", str(exc), latency)
            return failed(query.item_id, "exception", f"{type(exc).__name__}: {exc}", latency)
        try:
            return parse_output(query.item_id, outcome["value"], latency)
        except ContractError as exc:
            return failed(query.item_id, "bad_response", str(exc), latency)

    def answer(self, queries: Sequence[RagQuery], progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
        return answer_concurrently(self._one, queries, self.max_concurrency, progress)


class HttpRagSystem:
    """POSTs the request JSON to ``url`` per item; retries connection errors and 5xx with backoff.

    ``timeout`` is a deadline for each whole request, ``max_response_bytes`` caps the body, and
    ``headers`` are templates whose ``${VARIABLE}`` parts are read from the environment (see
    ``http_transport``); what goes wrong becomes that item's error, never the run's. Whatever the server sends
    back, error or answer, has the credential ones blanked out (``redact``) before anything keeps it: every form in an
    error, in an answer only the forms no ordinary word can be.
    """

    def __init__(self, url: str, k: int = 5, timeout: float = 30.0, max_concurrency: int = 4, retries: int = 2,
                 name: str | None = None, headers: Mapping[str, str] | None = None,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"an HTTP RAG system needs an http(s) URL, got {url!r}")
        refuse_url_credentials(url, "target", HEADERS_INSTEAD)
        self.url, self.k, self.timeout, self.retries = url, k, timeout, retries
        self.max_concurrency, self.max_response_bytes = max_concurrency, max_response_bytes
        self.name = name or url
        self.header_templates = dict(headers or {})
        self._headers, self._secrets = resolve_headers(self.header_templates)

    def config(self) -> dict[str, Any]:
        """Header templates (env var names), never their values."""
        return {"kind": "http", "url": self.url, "k": self.k, "timeout": self.timeout, "retries": self.retries,
                "max_response_bytes": self.max_response_bytes,
                **({"headers": self.header_templates} if self.header_templates else {})}

    def _post(self, body: bytes) -> HttpReply:
        return post(self.url, body, {"Content-Type": "application/json", "Accept": "application/json", **self._headers},
                    self.timeout, self.max_response_bytes)

    def _attempts(self, query: RagQuery) -> RagResponse:
        body = json.dumps(_request(query, self.k)).encode("utf-8")
        started = time.perf_counter()
        reply, problem = HttpReply(0, b""), ""
        for attempt in range(self.retries + 1):
            try:
                reply, problem = self._post(body), ""
            except TimeoutError:
                return failed(query.item_id, "timeout", f"no answer within {self.timeout:g} s",
                              (time.perf_counter() - started) * 1000)
            except ResponseTooLarge as exc:
                return failed(query.item_id, "bad_response", str(exc), (time.perf_counter() - started) * 1000)
            except (OSError, http.client.HTTPException) as exc:
                reply, problem = HttpReply(0, b""), f"connection failed: {type(exc).__name__}: {exc}"
            if reply.status and reply.status < 500:
                break
            if attempt < self.retries:
                time.sleep(0.2 * 2**attempt)
        latency = (time.perf_counter() - started) * 1000
        if problem:
            return failed(query.item_id, "http_error", f"{problem} (after {self.retries} retries)", latency)
        if not 200 <= reply.status < 300:
            shown = redact(reply.body.decode("utf-8", "replace"), self._secrets)[:200]  # cut after: no secret's head
            return failed(query.item_id, "http_error", f"HTTP {reply.status}: {shown}", latency)
        try:
            return self._parsed(query.item_id, json.loads(reply.body), latency)
        except ContractError as exc:
            return failed(query.item_id, "bad_response", str(exc), latency)
        except ValueError as exc:  # not UTF-8 or not JSON
            return failed(query.item_id, "bad_response", f"response: not JSON: {exc}", latency)
        except RecursionError:
            return failed(query.item_id, "bad_response", "response: JSON nesting too deep", latency)

    def _parsed(self, item_id: str, payload: Any, latency: float) -> RagResponse:
        """The item read from a successful reply, with what no word can be of the header secrets blanked out
        (``in_reply``: the answer, retrieved texts and claims get scored) and ``extra["secret_blanked"]`` when
        anything was, so a score drop on that item can be traced to it."""
        redacted = redact_json(payload, self._secrets, in_reply=True)
        response = parse_output(item_id, redacted, latency)
        return replace(response, extra={**response.extra, "secret_blanked": True}) if redacted != payload else response

    def _one(self, query: RagQuery) -> RagResponse:
        response = self._attempts(query)
        return replace(response, error=redact(response.error, self._secrets)) if response.error else response

    def answer(self, queries: Sequence[RagQuery], progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
        return answer_concurrently(self._one, queries, self.max_concurrency, progress)
