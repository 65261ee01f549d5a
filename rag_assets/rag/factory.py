"""A RAG system from what names it: a kind and a target (the ``rag`` resource's config), or any
object ``rag_assets.evaluate`` is given (a function, a URL, a LangChain chain, a LlamaIndex query
engine, ``"reference"``, or a system already built)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.adapters import DEFAULT_MAX_RESPONSE_BYTES, CallableRagSystem, HttpRagSystem, load_target
from rag_assets.rag.http_transport import HEADERS_INSTEAD, refuse_url_credentials
from rag_assets.rag.system import FRAMEWORKS, RagSystem, framework_system
from rag_assets.ranges import above_zero, at_least_one

KINDS = ("reference", "callable", "http", *FRAMEWORKS)


def check_system_limits(k: int, timeout_seconds: float, max_concurrency: int) -> None:
    """Refuses k below 1, a timeout not above 0 and a concurrency below 1, naming the setting (``rag_assets.ranges``):
    k 0 asked for no chunk and every answer was blamed on the system as a bad response, k -1 was sent as is, a
    timeout of 0 failed every item and a concurrency of 0 failed in the thread pool naming no setting (tester)."""
    at_least_one("k", k, 5)
    above_zero("timeout_seconds", timeout_seconds, 30)
    at_least_one("max_concurrency", max_concurrency, 4)


def check_system_spec(kind: str, target: str | None, k: int = 5, timeout_seconds: float = 30.0,
                      max_concurrency: int = 4) -> None:
    """Refuses a kind, a missing target, an http target holding a credential or a limit out of range
    (``check_system_limits``) before anything runs: a component's defs.yaml is checked when the code location
    loads, not when the RAG step first builds the system."""
    check_system_limits(k, timeout_seconds, max_concurrency)
    if kind not in KINDS:
        raise ConfigError(f"RAG system kind must be reference, callable, http, {' or '.join(FRAMEWORKS)}, got {kind!r}")
    if kind != "reference" and not target:
        raise ConfigError(f"a {kind} RAG system needs target (module:function or URL)")
    if kind == "http":
        refuse_url_credentials(target, "target", HEADERS_INSTEAD)


def make_system(kind: str, target: str | None, corpus_version: str, chunks: SnapshotChunks, llm: LLMClient,
                cache: LLMCache | None, index_dir: Path | None, corpus_root: Path | None = None, *,
                name: str | None = None, k: int = 5, timeout: float = 30.0, max_concurrency: int = 4,
                retries: int = 2, headers: Mapping[str, str] | None = None,
                max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES, input_key: str | None = "input") -> RagSystem:
    """The system of one kind (see ``RagSystemResource``); the reference one answers with ``llm`` over a
    BM25 index of ``chunks`` (kept in ``index_dir`` when given)."""
    check_system_spec(kind, target, k, timeout, max_concurrency)
    if kind == "reference":
        from rag_assets.rag.bm25 import index_for
        from rag_assets.rag.reference import ReferenceRagSystem

        index = index_for(corpus_version, chunks, index_dir)
        return ReferenceRagSystem(index, k, llm, cache, index.doc_versions)
    if kind == "callable":
        return _object_system(built_target(target), target, corpus_root, k, timeout, max_concurrency, input_key)
    if kind == "http":
        return HttpRagSystem(target, k, timeout, max_concurrency, retries, name, headers, max_response_bytes)
    return framework_system(kind, target, corpus_root, input_key=input_key, k=k, timeout=timeout,
                            max_concurrency=max_concurrency)


def _framework(value: Any) -> str | None:
    """``langchain`` or ``llamaindex`` when the object's class comes from one (looked up by module, so
    neither extra is imported to ask)."""
    modules = {cls.__module__.split(".")[0] for cls in type(value).__mro__}
    if modules & {"langchain", "langchain_core"}:
        return "langchain"
    if "llama_index" in modules:
        return "llamaindex"
    return None


def _name(function: Any) -> str:
    return f"{getattr(function, '__module__', None) or 'python'}:{getattr(function, '__qualname__', type(function).__name__)}"


def system_for(system: Any, corpus_version: str, chunks: SnapshotChunks, llm: LLMClient,
               cache: LLMCache | None, corpus_root: Path | None, k: int = 5) -> RagSystem:
    """What ``rag_assets.evaluate(system=...)`` accepts, as a RagSystem: ``"reference"``, an http(s) URL,
    ``"module:function"``, a LangChain Runnable, a LlamaIndex query engine, a function taking the
    request dict of the contract (``rag_assets.rag.adapters``), or an object with ``answer`` and ``config``."""
    if isinstance(system, str):
        kind = ("reference" if system == "reference" else "http" if system.startswith(("http://", "https://"))
                else "callable")
        return make_system(kind, None if kind == "reference" else system, corpus_version, chunks, llm, cache, None,
                           corpus_root, k=k)
    return _object_system(system, _name(system), corpus_root, k)


def is_system(value: Any) -> bool:
    """Whether ``value`` can answer as a RAG system (see ``_object_system``)."""
    return (_framework(value) is not None or callable(value)
            or (callable(getattr(value, "answer", None)) and callable(getattr(value, "config", None))))


def _object_system(system: Any, name: str, corpus_root: Path | None, k: int, timeout: float = 30.0,
                   max_concurrency: int = 4, input_key: str | None = "input") -> RagSystem:
    """A RagSystem from an object: a LangChain Runnable, a LlamaIndex query engine, a system already built
    (``answer`` and ``config``), or a function taking the contract's request dict."""
    framework = _framework(system)
    if framework == "langchain":
        from rag_assets.rag.langchain_system import LangChainRagSystem

        return LangChainRagSystem(system, name, corpus_root, input_key, k, timeout, max_concurrency)
    if framework == "llamaindex":
        from rag_assets.rag.llamaindex_system import LlamaIndexRagSystem

        return LlamaIndexRagSystem(system, name, corpus_root, k, timeout, max_concurrency)
    if not is_system(system):
        raise ConfigError(f"a RAG system is 'reference', an http(s) URL, 'module:function', a function, a LangChain "
                          f"chain or a LlamaIndex query engine; got {type(system).__name__}")
    if callable(getattr(system, "answer", None)) and callable(getattr(system, "config", None)):
        return system
    return CallableRagSystem(name, k, timeout, max_concurrency, function=system)


def _is_factory(found: Any) -> bool:
    """A function that takes no argument: what it returns is the system (a chain, an engine, a function)."""
    if not callable(found) or _framework(found) is not None or hasattr(found, "answer"):
        return False
    try:
        parameters = inspect.signature(found).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                   for p in parameters)


def built_target(target: str) -> Any:
    """What a ``module:attribute`` target names: the object, or the one it builds when it is a function taking
    no argument (a contract function takes the request dict, so it is never called here)."""
    found = load_target(target)
    if not _is_factory(found):
        return found
    built = found()
    if _framework(built) is None and not callable(built) and not callable(getattr(built, "answer", None)):
        raise ConfigError(f"{target!r} takes no argument, so it was called to build the system, and it returned a "
                          f"{type(built).__name__}; a function of the RAG contract takes the request dict")
    return built
