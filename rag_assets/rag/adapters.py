"""Plug in your own RAG system: a Python callable (``module:function``) or an HTTP endpoint.

Both speak one JSON contract. Request (a dict for the callable, the POST body for HTTP)::

    {"item_id": "q-…", "question": "…", "corpus_version": "cv-…", "k": 5}

Response::

    {"answer": "… [id] …" | null,
     "retrieved": [{"chunk_id": "<snapshot id>", "score": 12.3},                   # best first; each entry
                   {"id": "<own id>", "text": "…", "source": "docs/a.md"},         # one of these three
                   {"text": "…"}, …],
     "citations": [{"claim": "…", "chunk_id": "<snapshot or own id>"}, …],         # optional
     "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}}             # optional

A ``chunk_id`` is the snapshot's (``corpus_snapshot`` / the golden set's ``relevant_chunks``); a
context given by text is mapped onto the snapshot's chunks by the run (``rag_assets.rag.system``).
An exception, a timeout, a non-2xx answer after retries, a response that breaks the contract, or
snapshot chunk ids the snapshot lacks each become an error record for that item; the run goes on.
"""

from __future__ import annotations

import importlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.rag.models import Citation, RagQuery, RagResponse, RetrievedChunk, failed


class ContractError(ValueError):
    """A response that breaks the JSON contract; the message names the field."""


def _field(value: Any, kind: type | tuple[type, ...], where: str, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind in (int, float, (int, float)):
        expected = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ContractError(f"{where}: expected {expected}, got {type(value).__name__}")
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


def parse_output(item_id: str, payload: Any, latency_ms: float) -> RagResponse:
    """A response dict to a RagResponse, or ContractError naming the first field that is wrong."""
    _field(payload, dict, "response")
    answer = _field(payload.get("answer"), str, "answer", optional=True)
    retrieved = [parse_retrieved(row, rank)
                 for rank, row in enumerate(_field(payload.get("retrieved", []), list, "retrieved"), start=1)]
    citations = []
    for index, row in enumerate(_field(payload.get("citations") or [], list, "citations")):
        _field(row, dict, f"citations[{index}]")
        citations.append(Citation(_field(row.get("claim", ""), str, f"citations[{index}].claim"),
                                  _field(row.get("chunk_id"), str, f"citations[{index}].chunk_id")))
    usage = _field(payload.get("usage") or {}, dict, "usage")
    return RagResponse(item_id=item_id, answer=answer, retrieved=tuple(retrieved), citations=tuple(citations),
                       latency_ms=latency_ms, input_tokens=int(usage.get("input_tokens", 0)),
                       output_tokens=int(usage.get("output_tokens", 0)), cost_usd=usage.get("cost_usd"))


def _request(query: RagQuery, k: int) -> dict[str, Any]:
    return {"item_id": query.item_id, "question": query.question, "corpus_version": query.corpus_version, "k": k}


def load_callable(target: str) -> Callable[[dict[str, Any]], Any]:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"a callable RAG system is given as 'module:function', got {target!r}")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load RAG system {target!r}: {exc}") from exc
    if not callable(function):
        raise ConfigError(f"{target!r} is not callable")
    return function


class CallableRagSystem:
    """Calls ``function(request_dict)`` per item, at most ``max_concurrency`` at once, each within ``timeout``.

    A call that overruns its timeout is recorded as such and abandoned (Python cannot stop a
    thread); its thread finishes in the background.
    """

    def __init__(self, target: str, k: int = 5, timeout: float = 30.0, max_concurrency: int = 4) -> None:
        self.name, self.target, self.k, self.timeout = target, target, k, timeout
        self.function = load_callable(target)
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self.max_concurrency = max_concurrency

    def config(self) -> dict[str, Any]:
        return {"kind": "callable", "target": self.target, "k": self.k, "timeout": self.timeout}

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
            return failed(query.item_id, "exception", f"{type(exc).__name__}: {exc}", latency)
        try:
            return parse_output(query.item_id, outcome["value"], latency)
        except ContractError as exc:
            return failed(query.item_id, "bad_response", str(exc), latency)

    def answer(self, queries: Sequence[RagQuery]) -> list[RagResponse]:
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(self._one, queries))


class HttpRagSystem:
    """POSTs the request JSON to ``url`` per item; retries connection errors and 5xx with backoff."""

    def __init__(self, url: str, k: int = 5, timeout: float = 30.0, max_concurrency: int = 4, retries: int = 2,
                 name: str | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"an HTTP RAG system needs an http(s) URL, got {url!r}")
        self.url, self.k, self.timeout, self.retries = url, k, timeout, retries
        self.max_concurrency = max_concurrency
        self.name = name or url

    def config(self) -> dict[str, Any]:
        return {"kind": "http", "url": self.url, "k": self.k, "timeout": self.timeout, "retries": self.retries}

    def _post(self, body: bytes) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def _one(self, query: RagQuery) -> RagResponse:
        body = json.dumps(_request(query, self.k)).encode("utf-8")
        started = time.perf_counter()
        status, payload, problem = 0, b"", ""
        for attempt in range(self.retries + 1):
            try:
                status, payload = self._post(body)
                problem = ""
            except TimeoutError:
                return failed(query.item_id, "timeout", f"no answer within {self.timeout:g} s",
                              (time.perf_counter() - started) * 1000)
            except (urllib.error.URLError, ConnectionError, OSError) as exc:
                status, problem = 0, f"connection failed: {getattr(exc, 'reason', exc)}"
            if status and status < 500:
                break
            if attempt < self.retries:
                time.sleep(0.2 * 2**attempt)
        latency = (time.perf_counter() - started) * 1000
        if problem:
            return failed(query.item_id, "http_error", f"{problem} (after {self.retries} retries)", latency)
        if not 200 <= status < 300:
            return failed(query.item_id, "http_error", f"HTTP {status}: {payload[:200].decode('utf-8', 'replace')}",
                          latency)
        try:
            return parse_output(query.item_id, json.loads(payload), latency)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return failed(query.item_id, "bad_response", f"response is not JSON: {exc}", latency)
        except ContractError as exc:
            return failed(query.item_id, "bad_response", str(exc), latency)

    def answer(self, queries: Sequence[RagQuery]) -> list[RagResponse]:
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(self._one, queries))
