"""The settings of the evaluation's gates, checked before anything is judged.

The evaluation and ab_comparison assets, production_sample and the Python API take k, the significance
tests' alpha, the judge failure budget and allowed drops per metric; each calls ``check_gate_settings``
first, so a value that would switch a gate off (alpha 0: nothing is ever significant, and a regressed
evaluation became the next baseline), make it meaningless (a budget of 500%) or be ignored (an allowed drop
for a misspelt metric) stops the run before any store write or paid call, with the one-line refusal of
``rag_assets.ranges`` or of the thresholds file's metric names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.ranges import at_least_one, share, significance_level
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.metrics.registry import DEFAULT_K
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE
from rag_assets.scoring.thresholds import check_metric_name

#: The source a refused allowed-drop name is named by.
ALLOWED_DROPS = "allowed_drops"


def check_judge_budget(max_judge_failure_rate: float) -> None:
    """Refuses a judge failure budget outside [0, 1]: a share of a metric's items (5 read as "500% of its items
    not judged", a budget no outage can spend)."""
    share("max_judge_failure_rate", max_judge_failure_rate, MAX_JUDGE_FAILURE_RATE)


def check_gate_settings(alpha: float, max_judge_failure_rate: float, allowed_drops: Mapping[str, float] | None = None,
                        k: int = DEFAULT_K, production: Sequence[str] | None = None) -> None:
    """Refuses k below 1, alpha outside (0, 1), a judge failure budget outside [0, 1], an allowed drop for a
    name that is not a metric at ``k`` (the thresholds file's rule) and one outside [0, 1] (a drop of 7 switched
    that metric's regression gate off), in that order; ``k`` is the retrieval
    metrics'. production_sample gives its ``production`` metrics, the only ones it scores: an allowed drop for
    another (recall@5) would be ignored."""
    at_least_one("k", k, DEFAULT_K)
    significance_level("alpha", alpha, 0.05)
    check_judge_budget(max_judge_failure_rate)
    for metric, drop in (allowed_drops or {}).items():
        check_metric_name(metric, ALLOWED_DROPS, k, production)
        share(f"{ALLOWED_DROPS}.{metric}", drop, REGISTRY.allowed_drop(metric))
