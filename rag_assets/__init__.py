"""rag_assets: the lifecycle of a RAG golden set as Dagster software-defined assets.

The domain core (corpus, generation, curation, golden, rag, scoring, llm, store) knows nothing
of Dagster; ``rag_assets.defs`` wires it into assets, checks, sensors and schedules.
"""

from typing import Any

from rag_assets.component import RagEvaluation as RagEvaluation


def __getattr__(name: str) -> Any:
    """``from rag_assets import judge``, imported on first use so that importing any module of the
    package does not load the whole scoring stack."""
    if name == "judge":
        from rag_assets.scoring.single import judge

        return judge
    raise AttributeError(f"module 'rag_assets' has no attribute {name!r}")
