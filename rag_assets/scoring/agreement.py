"""How well a judge's scores agree with labels: agreement, balanced accuracy, ROC-AUC, bootstrap intervals.

Two kinds of labels. A 0/1 label per answer: agreement is the accuracy of ``score >= 0.5`` (the judge
metrics are shares, so 0.5 is the midpoint, not a tuned threshold), Cohen's kappa the same agreement
beyond chance, balanced accuracy its mean recall of both classes, ROC-AUC the chance that a random good
answer outscores a random bad one (ties half).
A pair (a good and a bad answer to the same question): agreement is the share of pairs where the good
one scores higher (a tie counts half); balanced accuracy and ROC-AUC pool the pairs' answers as 1 and 0.
Intervals: percentile bootstrap over the labelled units (answers, or whole pairs), seeded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

THRESHOLD = 0.5
BOOTSTRAP_SAMPLES = 2000
NAN = float("nan")


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Mann-Whitney: P(score of a 1 > score of a 0), ties counting half; NaN without both classes."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    good, bad = s[y], s[~y]
    if not good.size or not bad.size:
        return NAN
    wins = (good[:, None] > bad[None, :]).sum() + 0.5 * (good[:, None] == bad[None, :]).sum()
    return float(wins / (good.size * bad.size))


def balanced_accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float = THRESHOLD) -> float:
    """Mean of the recall of the 1s and of the 0s at ``score >= threshold``; NaN without both classes."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    if y.all() or not y.any():
        return NAN
    predicted = s >= threshold
    return float((predicted[y].mean() + (~predicted[~y]).mean()) / 2)


def accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float = THRESHOLD) -> float:
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    return float(((s >= threshold) == y).mean()) if y.size else NAN


def cohen_kappa(scores: Sequence[float], labels: Sequence[int], threshold: float = THRESHOLD) -> float:
    """(observed - chance agreement) / (1 - chance) of ``score >= threshold`` with the labels, chance from
    both sides' marginals; NaN when chance agreement is 1 (both sides constant and equal)."""
    predicted, y = np.asarray(scores, dtype=float) >= threshold, np.asarray(labels, dtype=bool)
    if not y.size:
        return NAN
    observed = float((predicted == y).mean())
    chance = float(predicted.mean() * y.mean() + (1 - predicted.mean()) * (1 - y.mean()))
    return NAN if chance == 1.0 else (observed - chance) / (1 - chance)


def pair_agreement(good: Sequence[float], bad: Sequence[float]) -> float:
    """Share of pairs whose good answer scores higher, a tie counting half."""
    g, b = np.asarray(good, dtype=float), np.asarray(bad, dtype=float)
    return float(((g > b) + 0.5 * (g == b)).mean()) if g.size else NAN


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float

    def __str__(self) -> str:
        if np.isnan(self.value):
            return "n/a"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


def bootstrap(n: int, statistic: Callable[[np.ndarray], float], samples: int = BOOTSTRAP_SAMPLES,
              seed: int = 0) -> Estimate:
    """The statistic on all ``n`` units (``statistic(indices)``) with its 95% percentile interval."""
    value = statistic(np.arange(n))
    if n == 0 or np.isnan(value):
        return Estimate(value, NAN, NAN)
    rng = np.random.default_rng(seed)
    draws = np.array([statistic(rng.integers(0, n, n)) for _ in range(samples)])
    draws = draws[~np.isnan(draws)]
    return Estimate(value, float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5)))


@dataclass(frozen=True)
class Agreement:
    kind: str          # "labels" or "pairs"
    n: int             # answers, or pairs
    agreement: Estimate
    balanced_accuracy: Estimate
    roc_auc: Estimate
    kappa: Estimate    # labels only (a pair has no chance agreement to correct for)


def label_agreement(scores: Sequence[float], labels: Sequence[int], seed: int = 0) -> Agreement:
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    return Agreement("labels", len(s), bootstrap(len(s), lambda i: accuracy(s[i], y[i]), seed=seed),
                     bootstrap(len(s), lambda i: balanced_accuracy(s[i], y[i]), seed=seed),
                     bootstrap(len(s), lambda i: roc_auc(s[i], y[i]), seed=seed),
                     bootstrap(len(s), lambda i: cohen_kappa(s[i], y[i]), seed=seed))


def paired_agreement(good: Sequence[float], bad: Sequence[float], seed: int = 0) -> Agreement:
    g, b = np.asarray(good, dtype=float), np.asarray(bad, dtype=float)

    def pooled(metric: Callable[[Sequence[float], Sequence[int]], float]) -> Callable[[np.ndarray], float]:
        return lambda i: metric(np.concatenate([g[i], b[i]]), np.concatenate([np.ones(i.size), np.zeros(i.size)]))

    return Agreement("pairs", len(g), bootstrap(len(g), lambda i: pair_agreement(g[i], b[i]), seed=seed),
                     bootstrap(len(g), pooled(balanced_accuracy), seed=seed),
                     bootstrap(len(g), pooled(roc_auc), seed=seed), Estimate(NAN, NAN, NAN))
