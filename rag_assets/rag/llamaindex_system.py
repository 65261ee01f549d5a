"""A LlamaIndex query engine as a RAG system (extra ``llamaindex``).

``engine.query(question)`` gives a ``Response``: its ``response`` text is the answer and each of
its ``source_nodes`` becomes ``{"id", "text", "source", "score"}`` (the node's own id, its text
without metadata, its ``file_path``/``file_name`` made relative to the corpus root, its score).
The run goes through the same parsing, timeout and concurrency as a callable system.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.rag.adapters import CallableRagSystem, ContractError, load_built
from rag_assets.rag.contexts import context_entry

try:
    from llama_index.core.base.base_query_engine import BaseQueryEngine
    from llama_index.core.base.response.schema import Response
    from llama_index.core.schema import MetadataMode
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ConfigError("a LlamaIndex RAG system needs the extra: pip install 'rag_assets[llamaindex]'") from exc


def engine_response(result: Any, root: Path | None) -> dict[str, Any]:
    """A query engine's result as a contract response; ContractError when it is no plain ``Response``."""
    if not isinstance(result, Response):
        raise ContractError(f"query engine result: expected a Response (streaming off), got {type(result).__name__}")
    return {"answer": result.response,
            "retrieved": [context_entry(scored.node.node_id, scored.node.get_content(metadata_mode=MetadataMode.NONE),
                                        scored.node.metadata, root, scored.score) for scored in result.source_nodes]}


def load_engine(target: str) -> BaseQueryEngine:
    """The query engine ``module:attribute`` names, or the one it builds when it is a function."""
    return load_built(target, BaseQueryEngine, "a LlamaIndex query engine")


class LlamaIndexRagSystem(CallableRagSystem):
    def __init__(self, engine: BaseQueryEngine, target: str, root: Path | None = None, k: int = 5,
                 timeout: float = 30.0, max_concurrency: int = 4) -> None:
        self.engine, self.root = engine, root
        super().__init__(target, k, timeout, max_concurrency, function=self._query, kind="llamaindex")

    def _query(self, request: dict[str, Any]) -> dict[str, Any]:
        return engine_response(self.engine.query(request["question"]), self.root)
