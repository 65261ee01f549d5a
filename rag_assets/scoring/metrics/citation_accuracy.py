"""Citation accuracy: the share of the answer's citations whose chunk supports the cited claim."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rag_assets.rag.models import Citation
from rag_assets.scoring.metrics import faithfulness
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import Judgment, Metric
from rag_assets.text.tokens import content_words, jaccard


def _best_claim(text: str, claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    words = content_words(re.sub(r"\[[0-9a-f]{8,}\]", " ", text))
    scored = [(jaccard(words, content_words(c["claim"])), i) for i, c in enumerate(claims)]
    best = max(scored, default=(0.0, -1))
    return claims[best[1]] if best[0] > 0 else None


def fabricated(citations: Sequence[Citation], retrieved_ids: set[str]) -> int:
    """The citations of an id the system did not return: the response's own fault, counted whatever the judge
    answered (or whether its call failed)."""
    return sum(citation.chunk_id not in retrieved_ids for citation in citations)


def formula(citations: Sequence[Citation], retrieved_ids: set[str],
            judgment: Mapping[str, Any]) -> tuple[float, int]:
    """Share of citations whose chunk supports the cited claim, by the faithfulness judgment.

    A citation of an id that was not retrieved counts as fabricated (wrong), whether or not the snapshot has
    such a chunk: the run keeps such citations rather than voiding the item. Returns
    (accuracy, fabricated citations); NaN accuracy when the answer cites nothing.
    """
    if not citations:
        return math.nan, 0
    correct = 0
    for citation in citations:
        if citation.chunk_id in retrieved_ids:
            claim = _best_claim(citation.claim, judgment["claims"])
            correct += int(claim is not None and citation.chunk_id in claim.get("supporting_chunk_ids", []))
    return correct / len(citations), fabricated(citations, retrieved_ids)


def _accuracy(context: ItemContext, judgment: Judgment) -> float:
    """The formula, from a judgment that judged the answer (``faithfulness.judged``) where there are citations to
    score; undefined, whatever the judge said, where there are none."""
    citations = context.response.citations
    return formula(citations, set(context.retrieved_ids), faithfulness.judged(context, judgment) if citations
                   else judgment)[0]


METRIC = Metric(
    name="citation_accuracy", label="Citation accuracy", kind="judge", task=faithfulness.TASK, items="every",
    only_where_data=True,
    definition=("Share of the answer's citations whose chunk supports the claim it is attached to, by the "
                "faithfulness judgment; a citation of an id the system did not return (a chunk it did not retrieve, or "
                "an id no chunk has) is fabricated and wrong, counted in the evaluation's citations_fabricated. "
                "Undefined for an answer without citations, hence for an item the RAG system failed on: raising gains "
                "nothing answering without citations would not."),
    score=_accuracy,
    errored=lambda context: math.nan,
    thresholds={"high_stakes": 0.95},
    when_low=("Citations often point at chunks that do not support the sentence: cite per sentence, and validate "
              "cited ids against the retrieved set."),
    production_drift=(
        "citations point at chunks that do not support the claim (prompt or chunk ids changed)",
        "check cited ids against the retrieved set on the day's samples; re-validate the citation prompt",
    ),
)
