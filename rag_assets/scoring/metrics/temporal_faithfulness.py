"""Temporal faithfulness: whether the answer relies on the right version of the documents."""

from __future__ import annotations

from rag_assets.scoring import formulas
from rag_assets.scoring.metrics import faithfulness
from rag_assets.scoring.metrics.registry import Metric

METRIC = Metric(
    name="temporal_faithfulness", label="Temporal faithfulness", kind="judge", task=faithfulness.TASK, items="every",
    only_where_data=True,
    definition=("When the retrieved contexts come from several versions of the documents: 1 if every context the "
                "answer relies on (those supporting its grounded claims) is of the newest version retrieved, or of "
                "the version the question names; 0 otherwise. Undefined when one version was retrieved."),
    score=lambda context, judgment: formulas.temporal_faithfulness(context.item.question, context.retrieved_versions,
                                                                   judgment),
    thresholds={"high_stakes": 0.95},
)
