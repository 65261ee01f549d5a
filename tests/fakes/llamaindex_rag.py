"""A LlamaIndex RAG system a team might have: the corpus files as Documents, its own SentenceSplitter
chunks in a VectorStoreIndex, and LlamaIndex's MockLLM (no network).

The documents carry ``file_path`` metadata (what the adapter reads a context's source from) but keep it
out of what is embedded and out of the splitter's budget, as LlamaIndex's docs advise for metadata
that is no content: otherwise the absolute checkout path's words would weigh in every chunk's vector
and move its boundaries, and what is retrieved would depend on where the project is checked out."""

from __future__ import annotations

from pathlib import Path

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter

from tests.conftest import SAMPLE_CORPUS
from tests.fakes.own_chunking import word_vector


class WordHashEmbedding(BaseEmbedding):
    def _get_query_embedding(self, query: str) -> list[float]:
        return word_vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return word_vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return word_vector(query)


def build_query_engine(root: Path = SAMPLE_CORPUS, k: int = 5) -> BaseQueryEngine:
    """What a ``kind="llamaindex"`` target names: a function that builds the engine."""
    Settings.llm, Settings.embed_model = MockLLM(max_tokens=12), WordHashEmbedding()  # nothing reaches for OpenAI
    unembedded = ["file_path", "file_name"]
    documents = [Document(text=path.read_text(encoding="utf-8"), id_=path.relative_to(root).as_posix(),
                          metadata={"file_path": str(path), "file_name": path.name},
                          excluded_embed_metadata_keys=unembedded, excluded_llm_metadata_keys=unembedded)
                 for path in sorted(root.rglob("*.md"))]
    index = VectorStoreIndex.from_documents(documents, transformations=[SentenceSplitter(chunk_size=200, chunk_overlap=20)],
                                            embed_model=Settings.embed_model)
    return index.as_query_engine(similarity_top_k=k, llm=Settings.llm)
