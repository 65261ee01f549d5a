"""Aggregates: mean, standard deviation and n per metric, overall and per question type."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rag_assets.scoring.evaluate import ItemScores


@dataclass(frozen=True)
class Aggregate:
    metric: str
    mean: float | None
    std: float | None  # sample standard deviation (ddof=1); None below two values
    n: int
    failures: int      # judge failures on this metric (excluded from mean and n)

    def as_dict(self) -> dict:
        return {"mean": self.mean, "std": self.std, "n": self.n, "failures": self.failures}


def aggregate(items: Iterable[ItemScores], metric: str) -> Aggregate:
    items = list(items)
    values = np.array([i.values[metric] for i in items if metric in i.values], dtype=float)
    failures = sum(1 for i in items if metric in i.failures)
    if values.size == 0:
        return Aggregate(metric, None, None, 0, failures)
    std = float(values.std(ddof=1)) if values.size > 1 else None
    return Aggregate(metric, float(values.mean()), std, int(values.size), failures)


def aggregate_all(items: Sequence[ItemScores], metrics: Sequence[str]) -> dict[str, Aggregate]:
    return {metric: aggregate(items, metric) for metric in metrics}


def aggregate_by_type(items: Sequence[ItemScores], metrics: Sequence[str]) -> dict[str, dict[str, Aggregate]]:
    types = sorted({i.question_type for i in items})
    return {t: aggregate_all([i for i in items if i.question_type == t], metrics) for t in types}
