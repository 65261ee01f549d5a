"""What rag_assets.evaluate accepts as a system, each built as the rag resource would build it."""

from __future__ import annotations

import pytest

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.errors import ConfigError
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.adapters import CallableRagSystem, HttpRagSystem
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.factory import system_for
from rag_assets.rag.langchain_system import LangChainRagSystem
from rag_assets.rag.reference import ReferenceRagSystem
from tests.conftest import SAMPLE_CORPUS
from tests.fakes.langchain_rag import build_chain


CHUNKS = [SnapshotChunk("c1", "h1", "a.md", "A", "2.0", None, "", "Files can be at most 15 GB in version 2.0.", 0, 43)]


def _for(system, k: int = 5):
    return system_for(system, "cv-factory-test", SnapshotChunks.of(CHUNKS), OfflineClient(), None, SAMPLE_CORPUS, k)


def answer(request: dict) -> dict:
    return {"answer": request["question"], "retrieved": []}


def test_strings_name_the_reference_system_an_endpoint_or_a_function():
    assert isinstance(_for("reference"), ReferenceRagSystem)
    http = _for("http://127.0.0.1:9/rag", k=3)
    assert isinstance(http, HttpRagSystem) and http.config()["k"] == 3
    named = _for("tests.rag.test_factory:answer")
    assert isinstance(named, CallableRagSystem) and named.function is answer


def _optional_request(request: dict | None = None) -> dict:
    return {"answer": "", "retrieved": []}


def test_a_named_function_taking_no_argument_is_a_factory_and_what_it_builds_is_the_system():
    chain = _for("tests.fakes.langchain_rag:build_chain")
    assert isinstance(chain, LangChainRagSystem) and chain.config()["target"] == "tests.fakes.langchain_rag:build_chain"
    assert chain.config()["kind"] == "langchain"
    # a contract function takes the request, however it is written: it is never called to build anything
    assert _for("tests.rag.test_factory:answer").function is answer
    with pytest.raises(ConfigError, match="takes no argument, so it was called to build the system, and it returned a "
                                          "dict; a function of the RAG contract takes the request dict"):
        _for("tests.rag.test_factory:_optional_request")


def test_objects_are_wrapped_by_what_they_are():
    function = _for(answer)
    assert isinstance(function, CallableRagSystem) and function.config()["target"] == "tests.rag.test_factory:answer"
    chain = _for(build_chain())
    assert isinstance(chain, LangChainRagSystem) and chain.config()["kind"] == "langchain"
    assert _for(function) is function, "a built system is used as it is"


def test_anything_else_is_a_config_error_naming_what_was_given():
    with pytest.raises(ConfigError, match=r"^a RAG system is 'reference', an http\(s\) URL, 'module:function', .*; got int$"):
        _for(42)
    with pytest.raises(ConfigError, match="a RAG system is given as 'module:function'"):
        _for("not a target")
