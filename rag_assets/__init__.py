"""rag_assets: the lifecycle of a RAG golden set as Dagster software-defined assets.

The domain core (corpus, generation, curation, golden, rag, scoring, llm, store) knows nothing
of Dagster; ``rag_assets.defs`` wires it into assets, checks, sensors and schedules.
"""

from importlib import import_module
from typing import Any

#: The public names, each imported on first use so that importing any module of the package (the
#: Python API, the judge) loads neither Dagster nor the whole scoring stack.
_PUBLIC = {
    "judge": "rag_assets.scoring.single",
    "evaluate": "rag_assets.api",
    "RagEvaluation": "rag_assets.component",
}


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'rag_assets' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Lists the lazy names too: ``dg`` finds the ``RagEvaluation`` component through ``dir()``."""
    return sorted({*globals(), *_PUBLIC})
