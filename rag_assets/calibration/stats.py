"""How far the judge agrees with the experts, per metric: accuracy, Cohen's kappa with a bootstrap 95%
interval, the confusion matrix and the items they disagree on (statistics from scoring.agreement)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.calibration.models import FAIL, PASS, REVIEWED_METRICS, ExpertVerdict
from rag_assets.scoring.agreement import Estimate, accuracy, bootstrap, cohen_kappa

VERDICTS = (PASS, FAIL)


@dataclass(frozen=True)
class Disagreement:
    item_id: str
    judge: str
    expert: str
    reviewer: str
    notes: str | None


@dataclass(frozen=True)
class MetricCalibration:
    metric: str
    n: int
    accuracy: float
    kappa: Estimate
    confusion: dict[str, dict[str, int]]  # expert verdict -> judge verdict -> items
    disagreements: tuple[Disagreement, ...]


def calibrate_metric(metric: str, verdicts: Sequence[ExpertVerdict], seed: int = 0) -> MetricCalibration:
    """The judge's agreement with the experts on ``metric``; kappa is NaN when chance agreement is
    certain (both sides gave one and the same verdict throughout)."""
    rows = [v for v in verdicts if v.metric == metric]
    judge = [1.0 if v.judge_verdict == PASS else 0.0 for v in rows]
    expert = [1 if v.expert_verdict == PASS else 0 for v in rows]
    confusion = {e: {j: sum(1 for v in rows if v.expert_verdict == e and v.judge_verdict == j) for j in VERDICTS}
                 for e in VERDICTS}
    kappa = bootstrap(len(rows), lambda i: cohen_kappa([judge[k] for k in i], [expert[k] for k in i]), seed=seed)
    return MetricCalibration(metric, len(rows), accuracy(judge, expert), kappa, confusion, tuple(
        Disagreement(v.item_id, v.judge_verdict, v.expert_verdict, v.reviewer, v.notes)
        for v in rows if v.judge_verdict != v.expert_verdict))


def calibrate_all(verdicts: Sequence[ExpertVerdict], seed: int = 0) -> list[MetricCalibration]:
    """Per reviewed metric with at least one expert verdict."""
    return [calibrate_metric(m, verdicts, seed) for m in REVIEWED_METRICS if any(v.metric == m for v in verdicts)]
