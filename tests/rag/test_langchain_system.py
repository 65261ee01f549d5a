"""The LangChain adapter with the real langchain-core: a team's own chunks in an InMemoryVectorStore,
its retriever and LangChain's fake chat model (no network), and the chain shapes LangChain returns."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from rag_assets.defs.resources import RagSystemResource
from rag_assets.errors import ConfigError
from rag_assets.rag.langchain_system import LangChainRagSystem, chain_response, load_chain, retrieval_chain
from rag_assets.rag.models import RagQuery
from tests.conftest import SAMPLE_CORPUS
from tests.fakes.langchain_rag import ANSWER, build_chain, vector_store

TARGET = "tests.fakes.langchain_rag:build_chain"
REQUEST = {"item_id": "i1", "question": "In version 2.0, what is the maximum file size?", "corpus_version": "cv", "k": 5}


@pytest.fixture(scope="module")
def system():
    return LangChainRagSystem(load_chain(TARGET), TARGET, root=SAMPLE_CORPUS)


def test_a_retrieval_chain_answers_with_its_own_ids_texts_and_sources_relative_to_the_corpus(system):
    response = system.function(REQUEST)
    assert response["answer"] == ANSWER
    retrieved = response["retrieved"]
    assert len(retrieved) == 5 and all(set(entry) == {"id", "text", "source"} for entry in retrieved)
    assert retrieved[0]["id"] == "v2/limits.md#0" and retrieved[0]["source"] == "v2/limits.md"
    assert "| Maximum file size | 15 GB |" in retrieved[0]["text"]
    for entry in retrieved:  # the system's own texts, taken verbatim from the files they name
        assert entry["text"] in (SAMPLE_CORPUS / entry["source"]).read_text(encoding="utf-8")
        assert entry["id"].startswith(entry["source"] + "#")
    assert system.config() == {"kind": "langchain", "target": TARGET, "k": 5, "timeout": 30.0, "input_key": "input"}


def test_the_answer_and_token_usage_reach_the_rag_response():
    model = GenericFakeChatModel(messages=iter([AIMessage("Nothing covers that.", usage_metadata={
        "input_tokens": 120, "output_tokens": 4, "total_tokens": 124})]))
    empty = vector_store(SAMPLE_CORPUS / "missing").as_retriever()
    system = LangChainRagSystem(retrieval_chain(empty, model), "team:chain")
    [response] = system.answer([RagQuery("i1", REQUEST["question"], "cv")])
    assert (response.ok, response.answer, response.input_tokens, response.output_tokens) == (
        True, "Nothing covers that.", 120, 4)
    assert response.retrieved == () and response.extra == {"declined": False}


@pytest.mark.parametrize(("output", "entries"), [
    ({"query": "q", "result": "15 GB", "source_documents": [  # RetrievalQA(return_source_documents=True)
        Document("Max 15 GB.", metadata={"source": str(SAMPLE_CORPUS / "v2" / "limits.md"), "id": "n7", "score": 0.8})]},
     [{"id": "n7", "text": "Max 15 GB.", "source": "v2/limits.md", "score": 0.8}]),
    ({"input": "q", "answer": "15 GB", "context": [
        Document("Max 15 GB.", metadata={"source": "https://docs.example.com/limits", "relevance_score": 3}),
        Document("Other.", metadata={"source": "/elsewhere/limits.md", "score": float("nan")})]},
     [{"text": "Max 15 GB.", "source": "https://docs.example.com/limits", "score": 3.0},
      {"text": "Other.", "source": "/elsewhere/limits.md"}]),
])
def test_the_common_chain_output_shapes_become_contract_entries(output, entries):
    assert chain_response(output, SAMPLE_CORPUS) == {"answer": "15 GB", "retrieved": entries}


@pytest.mark.parametrize(("output", "error"), [
    ("just a string", "chain output: expected a dict with answer or result and context or source_documents, got str"),
    ({"answer": "x"}, "chain output: no context or source_documents (it has answer)"),
    ({"context": []}, "chain output: no answer or result (it has context)"),
    ({"answer": "x", "context": ["text"]}, "chain output: context must be a list of Documents"),
    ({"answer": None, "context": []}, 'answer: null; a decline is "declined": true or an empty answer with a "reason"'),
])
def test_a_chain_whose_output_does_not_fit_is_an_item_error_naming_what_is_wrong(output, error):
    system = LangChainRagSystem(RunnableLambda(lambda _: output), "team:chain", input_key=None)
    [response] = system.answer([RagQuery("i1", "q?", "cv")])
    assert (response.error_kind, response.error) == ("bad_response", error)


def test_the_rag_resource_names_a_chain_by_module_attribute(tmp_path):
    resource = RagSystemResource(kind="langchain", target=TARGET, k=3, timeout_seconds=9, input_key="input")
    system = resource.system("cv", [], None, None, tmp_path, corpus_root=SAMPLE_CORPUS)
    assert system.config() == {"kind": "langchain", "target": TARGET, "k": 3, "timeout": 9.0, "input_key": "input"}
    assert system.function(REQUEST)["retrieved"][0]["source"] == "v2/limits.md"
    with pytest.raises(ConfigError, match="kind must be reference, callable, http, langchain or llamaindex, got 'haystack'"):
        RagSystemResource(kind="haystack", target=TARGET).system("cv", [], None, None, tmp_path)


def test_a_target_that_is_no_runnable_is_a_config_error():
    with pytest.raises(ConfigError, match="is not a LangChain Runnable nor a function that returns one"):
        load_chain("tests.fakes.langchain_rag:ANSWER")
    assert load_chain(TARGET).invoke({"input": "How often are vault keys rotated?"})["answer"].content == ANSWER
