"""Citation accuracy: the share of the answer's citations whose chunk supports the cited claim."""

from __future__ import annotations

from rag_assets.scoring import formulas
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.scoring.metrics import faithfulness
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import Judgment, Metric


def _accuracy(context: ItemContext, judgment: Judgment) -> tuple[float, int]:
    return formulas.citation_accuracy(context.response.citations, set(context.retrieved_ids), judgment)


def _record(context: ItemContext, judgment: Judgment, scores: ItemScores) -> None:
    scores.fabricated_citations = _accuracy(context, judgment)[1]


METRIC = Metric(
    name="citation_accuracy", label="Citation accuracy", kind="judge", task=faithfulness.TASK, items="every",
    only_where_data=True,
    definition=("Share of the answer's citations whose chunk supports the claim it is attached to, by the "
                "faithfulness judgment; a citation of a chunk that was not retrieved is fabricated and wrong. "
                "Undefined for an answer without citations."),
    score=lambda context, judgment: _accuracy(context, judgment)[0], record=_record,
    thresholds={"high_stakes": 0.95},
)
