"""Temporal faithfulness: whether the answer relies on the right version of the documents."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.metrics import faithfulness
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import Judgment, Metric


def _version_key(version: str | None) -> tuple:
    parts = re.findall(r"\d+", version or "")
    return tuple(int(p) for p in parts) if parts else (-1,)


def _versions(retrieved_versions: Mapping[str, str | None]) -> set[str]:
    return {v for v in retrieved_versions.values() if v}


def formula(question: str, retrieved_versions: Mapping[str, str | None],
            judgment: Mapping[str, Any]) -> float:
    """When the retrieved chunks come from several document versions: 1 if every chunk the answer
    relies on (supporting chunks of grounded claims) is of the newest version retrieved, or of the
    version the question names; 0 otherwise. NaN when only one version was retrieved or the answer
    relies on no chunk."""
    versions = _versions(retrieved_versions)
    if len(versions) < 2:
        return math.nan
    named = {v for v in versions if re.search(rf"(?<![\d.]){re.escape(v)}(?![\d.])", question)}
    wanted = named or {max(versions, key=_version_key)}
    used = {retrieved_versions.get(chunk_id) for claim in judgment["claims"] if claim["verdict"] == "grounded"
            for chunk_id in claim.get("supporting_chunk_ids", []) if chunk_id in retrieved_versions}
    used.discard(None)
    if not used:
        return math.nan
    return 1.0 if used <= wanted else 0.0


def _score(context: ItemContext, judgment: Judgment) -> float:
    """The formula, from a judgment that judged the answer (``faithfulness.judged``) where several versions were
    retrieved; undefined, whatever the judge said, where they were not."""
    several = len(_versions(context.retrieved_versions)) > 1
    return formula(context.item.question, context.retrieved_versions,
                   faithfulness.judged(context, judgment) if several else judgment)


METRIC = Metric(
    name="temporal_faithfulness", label="Temporal faithfulness", kind="judge", task=faithfulness.TASK, items="every",
    only_where_data=True,
    definition=("When the retrieved contexts come from several versions of the documents: 1 if every context the "
                "answer relies on (those supporting its grounded claims) is of the newest version retrieved, or of "
                "the version the question names; 0 otherwise. Undefined when one version was retrieved, hence for an "
                "item the RAG system failed on (it retrieved none)."),
    score=_score,
    errored=lambda context: math.nan,
    thresholds={"high_stakes": 0.95},
    when_low=("Answers use outdated documents when newer ones were retrieved: prefer the newest version (metadata "
              "filter or recency boost) and say which version an answer is for."),
)
