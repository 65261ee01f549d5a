"""Daily drift of a production metric: is today's drop real, and is it large enough to act on?

Two conditions must hold before alerting, because each alone misfires:

* ``drop > allowed_drop`` — the drop matters to the product (a tolerance the user sets);
* ``drop > mdd`` — the drop is larger than the day-to-day noise of a sample of today's size.

The minimum detectable difference (MDD) is the design sources' one-tailed two-sample t-test form
``t_{1-alpha, df=2n-2} * sigma * sqrt(2/n)``. Here ``sigma`` is the standard deviation of the
pooled baseline values (many days, so a stable estimate of the per-query spread) and ``n`` is the
number of values scored today: the day's sample is the noisy side, and using its size keeps the
equal-size formula conservative when the baseline is much larger.

The t quantile comes from ``scipy.stats.t.ppf`` when scipy is importable (it is, through
great-expectations); otherwise from the normal quantile, which is slightly smaller for small n
(2.5% at n = 20, 1% at n = 50), so the fallback errs towards alerting.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from statistics import NormalDist

import numpy as np

from rag_assets.scoring.metrics import REGISTRY


#: metric -> (likely cause of a drop, first action): each production metric's own (``Metric.production_drift``);
#: the drift counterpart of scoring.diagnosis.
DIAGNOSIS: dict[str, tuple[str, str]] = {m.name: m.production_drift for m in REGISTRY if m.production_drift}


def _t_quantile(q: float, df: int) -> float:
    try:  # here, not at module level: scipy.stats is a one-second import the code location need not pay
        from scipy.stats import t as student_t
    except ImportError:  # pragma: no cover - scipy ships with great-expectations
        return NormalDist().inv_cdf(q)
    return float(student_t.ppf(q, df))


def minimum_detectable_difference(sigma: float, n: int, alpha: float = 0.05) -> float:
    """Smallest mean drop a one-tailed two-sample t-test at level ``alpha`` tells from noise (n per side)."""
    if n < 2:
        return math.inf  # no degrees of freedom: nothing is distinguishable from noise
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return _t_quantile(1 - alpha, 2 * n - 2) * sigma * math.sqrt(2 / n)


@dataclass(frozen=True)
class DriftResult:
    metric: str | None
    baseline_mean: float | None  # None when there is no history
    today_mean: float | None  # None when nothing was scored today
    drop: float  # baseline_mean - today_mean; positive is worse
    mdd: float
    n: int  # values scored today
    beyond_noise: bool
    alert: bool

    @property
    def diagnosis(self) -> tuple[str, str] | None:
        """(likely cause, first action) when alerting on a metric the table knows."""
        return DIAGNOSIS.get(self.metric or "") if self.alert else None


def detect_drift(history: Mapping[date, Sequence[float]], today: Sequence[float], allowed_drop: float,
                 alpha: float = 0.05, metric: str | None = None) -> DriftResult:
    """Compare today's values with the pooled values of the previous days."""
    baseline = np.asarray([v for values in history.values() for v in values], dtype=float)
    current = np.asarray(today, dtype=float)
    if baseline.size < 2 or current.size == 0:
        return DriftResult(metric, float(baseline.mean()) if baseline.size else None,
                           float(current.mean()) if current.size else None, 0.0, math.inf, current.size,
                           False, False)
    baseline_mean, today_mean = float(baseline.mean()), float(current.mean())
    drop = baseline_mean - today_mean
    mdd = minimum_detectable_difference(float(baseline.std(ddof=1)), current.size, alpha)
    beyond_noise = drop > mdd
    return DriftResult(metric, baseline_mean, today_mean, drop, mdd, current.size, beyond_noise,
                       beyond_noise and drop > allowed_drop)
