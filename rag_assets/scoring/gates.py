"""The regression gate: against a baseline evaluation, on the items both scored.

A metric (overall, or within a question type) fails when its mean over the shared items dropped by
more than its allowed delta AND the paired test says the drop is significant (p < alpha). The
failure lists the items that got worse, worst first. Items are shared when the same revision of
the same golden item was scored in both evaluations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag_assets.scoring.significance import paired_drop_test
from rag_assets.scoring.metrics import REGISTRY

ItemKey = tuple[str, int]  # (item_id, revision)


@dataclass(frozen=True)
class RegressionResult:
    metric: str
    scope: str  # "overall" or a question type
    n: int
    baseline_mean: float
    current_mean: float
    drop: float
    allowed_drop: float
    p_value: float
    failed: bool
    worse_items: tuple[tuple[str, float, float], ...] = field(default=())


OVERALL = "overall"


def _defined(values: Mapping[str, float], metric: str) -> bool:
    value = values.get(metric)
    return value is not None and math.isfinite(value)


def paired_scopes(before: Mapping[ItemKey, Mapping[str, float]], after: Mapping[ItemKey, Mapping[str, float]],
                  types: Mapping[ItemKey, str], metric: str, min_items: int) -> dict[str, list[ItemKey]]:
    """The items both sides scored on ``metric`` (a finite value in each), overall and per question
    type, sorted so results never depend on dict order; scopes below ``min_items`` are left out,
    since a permutation test on two or three items cannot reach significance."""
    keys = sorted(k for k in set(before) & set(after) if _defined(before[k], metric) and _defined(after[k], metric))
    scopes: dict[str, list[ItemKey]] = {OVERALL: keys}
    for qtype in sorted({types[k] for k in keys if k in types}):
        scopes[qtype] = [k for k in keys if types.get(k) == qtype]
    return {scope: scoped for scope, scoped in scopes.items() if len(scoped) >= min_items}


def regression_gate(
    baseline: Mapping[ItemKey, Mapping[str, float]],
    current: Mapping[ItemKey, Mapping[str, float]],
    types: Mapping[ItemKey, str],
    metrics: Sequence[str],
    alpha: float = 0.05,
    allowed: Mapping[str, float] | None = None,
    min_items: int = 3,
) -> list[RegressionResult]:
    allowed = allowed or {}
    results = []
    for metric in metrics:
        for scope, keys in paired_scopes(baseline, current, types, metric, min_items).items():
            before = np.array([baseline[k][metric] for k in keys])
            after = np.array([current[k][metric] for k in keys])
            test = paired_drop_test(before, after)
            limit = allowed.get(metric, REGISTRY.allowed_drop(metric))
            failed = test.mean_drop > limit and test.p_value < alpha
            worse = sorted(((k[0], float(b), float(a)) for k, b, a in zip(keys, before, after) if a < b),
                           key=lambda w: w[2] - w[1])
            results.append(RegressionResult(metric, scope, len(keys), float(before.mean()), float(after.mean()),
                                            test.mean_drop, limit, test.p_value, failed, tuple(worse)))
    return results
