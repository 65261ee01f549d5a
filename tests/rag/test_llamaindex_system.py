"""The LlamaIndex adapter with the real llama-index-core: a VectorStoreIndex over the corpus files with
its own SentenceSplitter chunks, a word-hash embedding and MockLLM (no network)."""

from __future__ import annotations

import re
import shutil

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM

from rag_assets.defs.resources import RagSystemResource
from rag_assets.errors import ConfigError
from rag_assets.rag.llamaindex_system import LlamaIndexRagSystem, load_engine
from rag_assets.rag.models import RagQuery
from tests.conftest import SAMPLE_CORPUS
from tests.fakes.llamaindex_rag import WordHashEmbedding, build_query_engine

TARGET = "tests.fakes.llamaindex_rag:build_query_engine"
QUESTION = "In version 2.0, what is the maximum file size?"


@pytest.fixture(scope="module")
def system():
    return LlamaIndexRagSystem(load_engine(TARGET), TARGET, root=SAMPLE_CORPUS)


def test_a_query_engine_answers_with_its_own_node_ids_texts_sources_and_scores(system):
    response = system.function({"item_id": "i1", "question": QUESTION, "corpus_version": "cv", "k": 5})
    assert response["answer"] == " ".join(["text"] * 12)  # what MockLLM(max_tokens=12) says
    retrieved = response["retrieved"]
    assert len(retrieved) == 5 and all(set(entry) == {"id", "text", "source", "score"} for entry in retrieved)
    assert retrieved[0]["source"] == "v2/limits.md" and "Maximum file size | 15 GB" in retrieved[0]["text"]
    assert [e["score"] for e in retrieved] == sorted((e["score"] for e in retrieved), reverse=True)
    for entry in retrieved:  # LlamaIndex's uuids and its chunks' texts, verbatim from the files they name
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", entry["id"])
        assert entry["text"] in (SAMPLE_CORPUS / entry["source"]).read_text(encoding="utf-8")
    assert system.config() == {"kind": "llamaindex", "target": TARGET, "k": 5, "timeout": 30.0}


def test_what_the_engine_retrieves_does_not_depend_on_where_the_corpus_lies(system, tmp_path):
    elsewhere = tmp_path / "a folder with spaces" / ("and a much longer name than the checkout's " * 3).strip()
    shutil.copytree(SAMPLE_CORPUS, elsewhere)
    moved = LlamaIndexRagSystem(build_query_engine(elsewhere), TARGET, root=elsewhere)

    def ranking(rag: LlamaIndexRagSystem) -> list[tuple[str, str, float]]:
        return [(e["source"], e["text"], e["score"]) for e in rag.function({"question": QUESTION})["retrieved"]]

    assert ranking(moved) == ranking(system)


def test_an_engine_that_finds_nothing_still_answers_at_the_rag_response_level():
    engine = VectorStoreIndex([], embed_model=WordHashEmbedding()).as_query_engine(llm=MockLLM(max_tokens=3))
    [response] = LlamaIndexRagSystem(engine, "team:engine").answer([RagQuery("i1", QUESTION, "cv")])
    assert (response.ok, response.answer, response.retrieved, response.extra) == (
        True, "Empty Response", (), {"declined": False})


def test_a_streaming_engine_is_an_item_error_naming_the_result():
    engine = VectorStoreIndex([], embed_model=WordHashEmbedding()).as_query_engine(llm=MockLLM(), streaming=True)
    [response] = LlamaIndexRagSystem(engine, "team:engine").answer([RagQuery("i1", QUESTION, "cv")])
    assert (response.error_kind, response.error) == (
        "bad_response", "query engine result: expected a Response (streaming off), got StreamingResponse")


def test_the_rag_resource_names_a_query_engine_by_module_attribute(tmp_path):
    system = RagSystemResource(kind="llamaindex", target=TARGET).system("cv", [], None, None, tmp_path, SAMPLE_CORPUS)
    assert system.config() == {"kind": "llamaindex", "target": TARGET, "k": 5, "timeout": 30.0}
    assert system.root == SAMPLE_CORPUS and system.function({"question": QUESTION})["retrieved"][0]["source"] == "v2/limits.md"


def test_a_target_that_is_no_query_engine_is_a_config_error():
    with pytest.raises(ConfigError, match="is not a LlamaIndex query engine nor a function that returns one"):
        load_engine("tests.fakes.llamaindex_rag:SAMPLE_CORPUS")
    with pytest.raises(ConfigError, match="cannot load RAG system 'tests.fakes.llamaindex_rag:missing'"):
        load_engine("tests.fakes.llamaindex_rag:missing")
