"""Paired significance for the regression gate: is the drop on the shared items larger than noise?

A paired sign-flip permutation test on the per-item differences (baseline - current): under the
null hypothesis of no change each difference is as likely positive as negative. One-sided (we ask
about drops), exact when there are few items (all 2^n sign patterns), else 20,000 seeded random
patterns. A bootstrap 95% interval of the mean drop is reported beside it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

EXACT_UP_TO = 14
PERMUTATIONS = 20_000


@dataclass(frozen=True)
class PairedTest:
    n: int
    mean_drop: float
    p_value: float
    ci_low: float
    ci_high: float


def paired_drop_test(baseline: np.ndarray, current: np.ndarray, seed: int = 0) -> PairedTest:
    diffs = np.asarray(baseline, dtype=float) - np.asarray(current, dtype=float)
    n = diffs.size
    if n == 0:
        return PairedTest(0, 0.0, 1.0, 0.0, 0.0)
    observed = diffs.mean()
    rng = np.random.default_rng(seed)
    if n <= EXACT_UP_TO:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        signs = rng.choice((1.0, -1.0), size=(PERMUTATIONS, n))
    null_means = (signs * np.abs(diffs)).mean(axis=1)
    p_value = float((np.count_nonzero(null_means >= observed - 1e-12) + (0 if n <= EXACT_UP_TO else 1))
                    / (len(null_means) + (0 if n <= EXACT_UP_TO else 1)))
    boots = diffs[rng.integers(0, n, size=(5000, n))].mean(axis=1)
    low, high = np.percentile(boots, [2.5, 97.5])
    return PairedTest(n, float(observed), p_value, float(low), float(high))
