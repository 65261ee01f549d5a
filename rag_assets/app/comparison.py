"""What changed from one stored evaluation to another, item by item: the ``compare`` command's use case.

The metrics compared are those of A's cut-off ``k`` (the registry's names), and an item passes or fails by A's
thresholds, so B is read against what A was held to. A judge's scores are comparable only with the same judge
configuration's: when another one scored A and B, or either's was never recorded, only the metrics no judge scores
are compared, as in the regression gate (``calibration.models.comparable_metrics``), and the diff's note says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rag_assets.app.store import Store
from rag_assets.calibration.models import comparable_metrics, same_judge
from rag_assets.errors import RagAssetsError
from rag_assets.report.compare import EvaluationDiff, diff_from_store
from rag_assets.scoring.metrics import DEFAULT_K, REGISTRY
from rag_assets.scoring.retrieval import counted_under
from rag_assets.store.calibration_repository import SqlCalibrationRepository


class NoEvaluation(RagAssetsError):
    """An evaluation to compare is not in the store."""


@dataclass(frozen=True)
class Comparison:
    """The diff of B against A and its Markdown text."""

    diff: EvaluationDiff
    markdown: str


def _judge_note(a_id: str, b_id: str, judges: Mapping[str, str]) -> str:
    """Why A and B, which one judge configuration did not score (``judges``: each one's recorded judge configuration), are not
    compared on the judge-scored metrics (each configuration named as a person reads it)."""
    unrecorded = [e for e in (a_id, b_id) if e not in judges]
    why = (f"the judge configuration of {' and '.join(unrecorded)} was never recorded (saved before judge "
           "configurations were)" if unrecorded else
           f"{a_id} was scored by judge configuration {judges[a_id]}, {b_id} by another one, {judges[b_id]}")
    return (f"judge-scored metrics not compared: {why}; one judge's scores are not comparable with another's; "
            "only the metrics no judge scores are compared")


def compare_evaluations(store: Store, calibrations: SqlCalibrationRepository, a_id: str, b_id: str) -> Comparison:
    """Compare evaluation ``b_id`` with ``a_id``; NoEvaluation names the one(s) missing from the store."""
    first, second = store.evaluations().get(a_id), store.evaluations().get(b_id)
    judges = calibrations.judge_keys([a_id, b_id])
    same = same_judge(judges.get(a_id), judges.get(b_id))
    rules = {e: counted_under(record.gates) for e, record in ((a_id, first), (b_id, second)) if record is not None}
    alike = len(set(rules.values())) <= 1
    metrics = comparable_metrics(REGISTRY.names(k=first.k if first else DEFAULT_K), same, counted_alike=alike)
    labels = {e: (config.label() if (config := calibrations.config(key)) else key) for e, key in judges.items()}
    notes = ([] if same else [_judge_note(a_id, b_id, labels)]) + ([] if alike else [
        f"retrieval metrics not compared: {a_id} counted them under {rules[a_id]}, {b_id} under {rules[b_id]}"])
    note = "; ".join(notes)
    try:
        diff = diff_from_store(store.evaluations(), store.rag(), a_id, b_id, metrics, note)
        return Comparison(diff, diff.markdown())
    except KeyError as missing:
        raise NoEvaluation(missing.args[0]) from None
