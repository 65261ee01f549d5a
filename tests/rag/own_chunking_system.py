"""A RAG system that knows nothing of rag_assets: its own loader, fixed-window chunking, ids and BM25.

It reads the documents under ``$OWN_RAG_DOCS``, cuts each into 800-character windows (100 overlap)
named ``<path>#<n>``, and ranks them with its own BM25. Three entry points speak the open
retrieval contract the way real systems do:

- ``windows``: ``{"id", "text", "source", "score"}`` per context (own ids and texts);
- ``texts_only``: ``{"text"}`` per context (what ragas, DeepEval and Phoenix accept);
- ``snapshot_ids``: the same BM25 over units handed in by ``use_units`` (the test hands in the
  snapshot's chunks), returned as ``{"chunk_id"}``: the yardstick for the others;
- ``langchain_chain`` and ``llamaindex_engine``: the same BM25 over the same windows as a real
  LangChain retriever + chat model chain and a real LlamaIndex query engine (fake models of those
  libraries), for the adapters; ``windows`` also serves behind HTTP with a bearer token in the test.

The answer is the best window's first sentences: retrieval is what is under test here.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import Counter
from pathlib import Path

WINDOW, OVERLAP = 800, 100
_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<[^>]+>")
_lock = threading.Lock()
_indexes: dict[str, "Bm25"] = {}


class Bm25:
    """Okapi BM25 (k1 1.5, b 0.75) over (id, source, text) units."""

    def __init__(self, units: list[tuple[str, str, str]]) -> None:
        self.units = units
        self.counts = [Counter(_WORD.findall(text.lower())) for _, _, text in units]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = sum(self.lengths) / max(1, len(units))
        frequency = Counter(token for counts in self.counts for token in counts)
        self.idf = {t: math.log(1 + (len(units) - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}

    def search(self, question: str, k: int) -> list[tuple[float, tuple[str, str, str]]]:
        terms = set(_WORD.findall(question.lower())) & self.idf.keys()
        scored = []
        for unit, counts, length in zip(self.units, self.counts, self.lengths):
            score = sum(self.idf[t] * counts[t] * 2.5 / (counts[t] + 1.5 * (0.25 + 0.75 * length / self.average))
                        for t in terms if t in counts)
            if score > 0:
                scored.append((score, unit))
        scored.sort(key=lambda pair: (-pair[0], pair[1][0]))
        return scored[:k]


def _windows(root: Path) -> list[tuple[str, str, str]]:
    units = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".html":
            text = _TAG.sub(" ", text)
        source = path.relative_to(root).as_posix()
        for n, start in enumerate(range(0, max(1, len(text) - OVERLAP), WINDOW - OVERLAP)):
            units.append((f"{source}#{n}", source, text[start:start + WINDOW]))
    return units


def _index(key: str, build) -> Bm25:
    with _lock:
        if key not in _indexes:
            _indexes[key] = Bm25(build())
        return _indexes[key]


def use_units(units: list[tuple[str, str, str]]) -> None:
    """Rank these (id, source, text) units in ``snapshot_ids``."""
    with _lock:
        _indexes["units"] = Bm25(units)


def _answer(hits) -> str:
    return " ".join(re.split(r"(?<=[.!?])\s+", hits[0][1][2].strip())[:2]) if hits else ""


def _own_hits(question: str, k: int):
    root = os.environ["OWN_RAG_DOCS"]
    return _index(root, lambda: _windows(Path(root))).search(question, k)


def windows(request: dict) -> dict:
    hits = _own_hits(request["question"], request["k"])
    return {"answer": _answer(hits),
            "retrieved": [{"id": unit_id, "text": text, "source": source, "score": score}
                          for score, (unit_id, source, text) in hits]}


def texts_only(request: dict) -> dict:
    response = windows(request)
    return {"answer": response["answer"], "retrieved": [{"text": r["text"]} for r in response["retrieved"]]}


def snapshot_ids(request: dict) -> dict:
    hits = _indexes["units"].search(request["question"], request["k"])
    return {"answer": _answer(hits), "retrieved": [{"chunk_id": unit_id, "score": score} for score, (unit_id, _, _) in hits]}


def langchain_chain():
    """The same BM25 over the same windows as a LangChain retriever in the LCEL chain LangChain's docs
    teach (``{"input"}`` -> ``{"input", "context", "answer"}``), with LangChain's fake chat model:
    what a ``kind="langchain"`` target names."""
    from operator import itemgetter

    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough

    class OwnWindowsRetriever(BaseRetriever):
        k: int = 5

        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
            return [Document(id=unit_id, page_content=text, metadata={"source": source, "score": score})
                    for score, (unit_id, source, text) in _own_hits(query, self.k)]

    prompt = ChatPromptTemplate.from_messages([("system", "Answer from this context:\n{context}"), ("human", "{input}")])
    stuff = RunnablePassthrough.assign(context=lambda x: "\n\n".join(d.page_content for d in x["context"]))
    model = FakeListChatModel(responses=["From the retrieved documents."])
    return RunnablePassthrough.assign(context=itemgetter("input") | OwnWindowsRetriever()).assign(
        answer=stuff | prompt | model | StrOutputParser())


def llamaindex_engine():
    """The same BM25 over the same windows as a LlamaIndex retriever in a RetrieverQueryEngine with
    LlamaIndex's MockLLM: what a ``kind="llamaindex"`` target names."""
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    class OwnWindowsRetriever(BaseRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return [NodeWithScore(node=TextNode(id_=unit_id, text=text, metadata={"file_path": source}), score=score)
                    for score, (unit_id, source, text) in _own_hits(query_bundle.query_str, 5)]

    return RetrieverQueryEngine.from_args(OwnWindowsRetriever(), llm=MockLLM(max_tokens=12))
