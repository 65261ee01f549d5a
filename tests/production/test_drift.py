"""MDD formula and drift alerts on planted data."""

from __future__ import annotations

import math
from datetime import date, timedelta

import numpy as np
from scipy.stats import t

from rag_assets.production.drift import DIAGNOSIS, detect_drift, minimum_detectable_difference


def test_mdd_matches_the_t_test_formula() -> None:
    # sigma 0.2, n 50: t_{0.95, 98} ~ 1.6606, sqrt(2/50) = 0.2 -> 1.6606 * 0.2 * 0.2 ~ 0.0664
    expected = t.ppf(0.95, 98) * 0.2 * math.sqrt(2 / 50)
    assert minimum_detectable_difference(0.2, 50) == expected
    assert abs(expected - 0.06642) < 1e-4
    assert minimum_detectable_difference(0.2, 1) == math.inf


def _history(rng: np.random.Generator) -> dict[date, list[float]]:
    start = date(2024, 5, 1)
    return {start + timedelta(days=d): list(np.clip(rng.normal(0.85, 0.1, 40), 0, 1)) for d in range(7)}


def test_planted_drop_alerts_and_same_quality_day_does_not() -> None:
    rng = np.random.default_rng(7)
    history = _history(rng)

    bad_day = np.clip(rng.normal(0.65, 0.1, 40), 0, 1)
    drifted = detect_drift(history, bad_day, allowed_drop=0.05, metric="faithfulness")
    assert drifted.beyond_noise and drifted.alert
    assert drifted.drop > drifted.mdd and drifted.n == 40
    assert drifted.diagnosis == DIAGNOSIS["faithfulness"]

    same_day = np.clip(rng.normal(0.85, 0.1, 40), 0, 1)
    steady = detect_drift(history, same_day, allowed_drop=0.05, metric="faithfulness")
    assert not steady.alert and steady.diagnosis is None


def test_small_drop_beyond_noise_but_within_tolerance_does_not_alert() -> None:
    history = {date(2024, 5, 1): [0.9, 0.91, 0.89, 0.9] * 50}
    result = detect_drift(history, [0.87, 0.88, 0.86, 0.87] * 50, allowed_drop=0.05)
    assert result.beyond_noise and not result.alert


def test_no_history_never_alerts() -> None:
    result = detect_drift({}, [0.1, 0.2], allowed_drop=0.0)
    assert result.baseline_mean is None and not result.alert
    assert set(DIAGNOSIS) == {"faithfulness", "answer_relevance", "context_precision", "citation_accuracy"}
