"""A LangChain RAG system a team might have: its own chunks in an InMemoryVectorStore, a retriever
and a chat model (LangChain's fake one: no network), wired by ``retrieval_chain``."""

from __future__ import annotations

from pathlib import Path

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import Runnable
from langchain_core.vectorstores import InMemoryVectorStore

from rag_assets.rag.langchain_system import retrieval_chain
from tests.conftest import SAMPLE_CORPUS
from tests.fakes.own_chunking import chunks, word_vector

ANSWER = "The documentation answers this in the retrieved context."


class WordHashEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [word_vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return word_vector(text)


def vector_store(root: Path = SAMPLE_CORPUS) -> InMemoryVectorStore:
    store = InMemoryVectorStore(WordHashEmbeddings())
    store.add_documents([Document(id=own_id, page_content=text, metadata={"source": str(path)})
                         for own_id, text, path in chunks(root)])
    return store


def build_chain(root: Path = SAMPLE_CORPUS, k: int = 5) -> Runnable:
    """What a ``kind="langchain"`` target names: a function that builds the chain."""
    return retrieval_chain(vector_store(root).as_retriever(search_kwargs={"k": k}), FakeListChatModel(responses=[ANSWER]))
