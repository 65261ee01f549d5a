"""What changed from one stored evaluation to another, item by item: the ``compare`` command's use case.

The metrics compared are those of A's cut-off ``k`` (the registry's names), and an item passes or fails by A's
thresholds, so B is read against what A was held to.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.app.store import Store
from rag_assets.errors import RagAssetsError
from rag_assets.report.compare import EvaluationDiff, diff_from_store
from rag_assets.scoring.metrics import DEFAULT_K, REGISTRY


class NoEvaluation(RagAssetsError):
    """An evaluation to compare is not in the store."""


@dataclass(frozen=True)
class Comparison:
    """The diff of B against A and its Markdown text."""

    diff: EvaluationDiff
    markdown: str


def compare_evaluations(store: Store, a_id: str, b_id: str) -> Comparison:
    """Compare evaluation ``b_id`` with ``a_id``; NoEvaluation names the one(s) missing from the store."""
    first = store.evaluations().get(a_id)
    metrics = REGISTRY.names(k=first.k if first else DEFAULT_K)
    try:
        diff = diff_from_store(store.evaluations(), store.rag(), a_id, b_id, metrics)
        return Comparison(diff, diff.markdown())
    except KeyError as missing:
        raise NoEvaluation(missing.args[0]) from None
