"""A LangChain RAG chain as a RAG system (extra ``langchain``).

Takes any ``Runnable`` that returns a dict with the answer under ``answer`` (or ``result``) and the
retrieved ``Document``s under ``context`` (or ``source_documents``): the output of LangChain's
``create_retrieval_chain`` (``{"input", "context", "answer"}``) and of the older ``RetrievalQA``
with ``return_source_documents=True``. ``retrieval_chain`` builds that shape from a retriever and a
chat model for a team that has only those two. Each document becomes ``{"id", "text", "source",
"score"}`` with the system's own id and text; the run goes through the same parsing as a callable.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from pathlib import Path
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.rag.adapters import CallableRagSystem, ContractError, load_built
from rag_assets.rag.contexts import context_entry

try:
    from langchain_core.documents import Document
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable, RunnablePassthrough
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ConfigError("a LangChain RAG system needs the extra: pip install 'rag_assets[langchain]'") from exc

ANSWER_KEYS = ("answer", "result")
CONTEXT_KEYS = ("context", "source_documents")
DEFAULT_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "Answer the question from the context only. If the context does not answer it, say you cannot "
               "answer.\n\nContext:\n{context}"),
    ("human", "{input}"),
])


def retrieval_chain(retriever: BaseRetriever, chat_model: BaseChatModel,
                    prompt: ChatPromptTemplate = DEFAULT_PROMPT) -> Runnable:
    """``{"input": question}`` -> ``{"input", "context": [Document], "answer": AIMessage}``, as
    ``create_retrieval_chain`` answers, with langchain-core only (the model's message keeps its token usage)."""
    def stuff(inputs: dict[str, Any]) -> str:
        return "\n\n".join(document.page_content for document in inputs["context"])

    return RunnablePassthrough.assign(context=itemgetter("input") | retriever).assign(
        answer=RunnablePassthrough.assign(context=stuff) | prompt | chat_model)


def _answer(value: Any) -> tuple[Any, dict[str, int]]:
    """The answer text, and the token usage when the chain left the model's message as the answer."""
    if not isinstance(value, BaseMessage):
        return value, {}
    usage = value.usage_metadata or {}
    return value.content, {key: usage[key] for key in ("input_tokens", "output_tokens") if key in usage}


def chain_response(output: Any, root: Path | None) -> dict[str, Any]:
    """A chain's output as a contract response; ContractError names what the output lacks."""
    if not isinstance(output, Mapping):
        raise ContractError(f"chain output: expected a dict with {' or '.join(ANSWER_KEYS)} and "
                            f"{' or '.join(CONTEXT_KEYS)}, got {type(output).__name__}")
    answer_key = next((key for key in ANSWER_KEYS if key in output), None)
    context_key = next((key for key in CONTEXT_KEYS if key in output), None)
    if answer_key is None or context_key is None:
        missing = " or ".join(ANSWER_KEYS if answer_key is None else CONTEXT_KEYS)
        raise ContractError(f"chain output: no {missing} (it has {', '.join(map(str, output)) or 'no keys'})")
    answer, usage = _answer(output[answer_key])
    documents = output[context_key]
    if not isinstance(documents, list) or not all(isinstance(d, Document) for d in documents):
        raise ContractError(f"chain output: {context_key} must be a list of Documents")
    retrieved = [context_entry(d.id or d.metadata.get("id"), d.page_content, d.metadata, root) for d in documents]
    return {"answer": answer, "retrieved": retrieved, **({"usage": usage} if usage else {})}


def load_chain(target: str) -> Runnable:
    """The Runnable ``module:attribute`` names, or the one it builds when it is a function."""
    return load_built(target, Runnable, "a LangChain Runnable")


class LangChainRagSystem(CallableRagSystem):
    """Invokes the chain with ``{input_key: question}`` (or the bare question when ``input_key`` is
    None), within the callable system's timeout and concurrency."""

    def __init__(self, chain: Runnable, target: str, root: Path | None = None, input_key: str | None = "input",
                 k: int = 5, timeout: float = 30.0, max_concurrency: int = 4) -> None:
        self.chain, self.root, self.input_key = chain, root, input_key
        super().__init__(target, k, timeout, max_concurrency, function=self._invoke, kind="langchain")

    def config(self) -> dict[str, Any]:
        return {**super().config(), "input_key": self.input_key}

    def _invoke(self, request: dict[str, Any]) -> dict[str, Any]:
        question = request["question"]
        return chain_response(self.chain.invoke(question if self.input_key is None else {self.input_key: question}),
                              self.root)
