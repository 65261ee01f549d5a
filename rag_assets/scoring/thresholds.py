"""Per-metric minimums: named profiles, or the user's own file (YAML or JSON: ``{metric: minimum}``).

The profiles follow the design sources: ``general`` for a typical internal assistant,
``high_stakes`` where a wrong answer costs (legal, medical, finance), ``developer`` while a system
is being built. They are calibrated for a model as judge. ``offline`` is the offline judge's own
scale: the offline reference system on the sample corpus, a margin below its measured level
(faithfulness 0.99, answer relevance 0.39, context precision 0.40, context recall 0.79, decline
accuracy 1.0, hit rate 0.83, with the lexical offline judge of docs/judge.md; its context precision
is graded per chunk and weighs how much of a chunk bears on the question, so a chunk of several
sentences of which one answers grades lower: 0.51 before that reading, 0.77 with the former yes/no
verdicts, and the minimum follows the scale, 0.30). These minimums guard the
pipeline, not answer quality. ``auto``
(the default) is ``general`` with a model judge and ``offline`` with the offline one. Metrics a
profile does not name are reported without a gate. Each metric's module states its minimum in each
profile (``Metric.thresholds``); a profile is read from the registry.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from rag_assets.errors import ConfigError
from rag_assets.scoring.aggregate import Aggregate
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.metrics.registry import DEFAULT_K, PROFILES

AUTO = "auto"


def resolve_profile(profile: str, judge_is_offline: bool) -> str:
    return ("offline" if judge_is_offline else "general") if profile == AUTO else profile


def load_thresholds(profile: str, path: str | None = None, k: int = DEFAULT_K) -> dict[str, float]:
    """The minimums of a thresholds file (as written), or of a profile with its @k metrics at ``k``."""
    if path:
        file = Path(path)
        try:
            data = (json.loads(file.read_text()) if file.suffix == ".json" else yaml.safe_load(file.read_text())) or {}
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigError(f"thresholds file {file}: cannot be read: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"thresholds file {file}: expected a mapping of metric to minimum")
        for metric, value in data.items():
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"thresholds file {file}, field {metric}: expected a number in [0, 1], got {value!r}")
        return {str(k): float(v) for k, v in data.items()}
    if profile not in PROFILES:
        raise ConfigError(f"threshold profile must be one of {', '.join([AUTO, *PROFILES])}, got {profile!r}")
    return REGISTRY.profile(profile, k)


@dataclass(frozen=True)
class ThresholdResult:
    metric: str
    mean: float | None
    minimum: float
    passed: bool
    applicable: bool = True  # False: no item of the evaluation is one the metric scores; it passes, ungated

    @property
    def status(self) -> str:
        return "not applicable" if not self.applicable else "pass" if self.passed else "FAIL"


def applies(metric: str, aggregate: Aggregate | None, question_types: Collection[str]) -> bool:
    """Whether ``metric`` is one the evaluation's items (of ``question_types``, errored ones included) call for:
    the question types it scores (``Metric.items``; an adversarial item is judged on declining, the others on
    answering and on their evidence); a metric that scores only where the data has it (citations, document
    versions: ``Metric.only_where_data``) applies where it produced a value or a failure. A name the registry
    does not know is taken to score the answerable items."""
    if aggregate is None or aggregate.n > 0 or aggregate.failures > 0:
        return True  # measured, failed, or a name the evaluation never computed: gated (the last fails)
    found = REGISTRY.find(metric)
    if found is None:
        return any(t != "adversarial" for t in question_types)
    return not found.only_where_data and found.called_for(question_types)


def check_thresholds(aggregates: Mapping[str, Aggregate], thresholds: Mapping[str, float],
                     question_types: Collection[str]) -> list[ThresholdResult]:
    """Each minimum against its metric's mean, over an evaluation whose items have ``question_types``. A metric
    with no value fails its minimum when the items call for it (every judge call or RAG answer for it failed);
    when none does (decline accuracy on a set without adversarial questions) it is not applicable: reported
    so, never a failed gate."""
    results = []
    for metric, minimum in thresholds.items():
        found = aggregates.get(metric)
        mean = found.mean if found else None
        applicable = applies(metric, found, question_types)
        results.append(ThresholdResult(metric, mean, minimum, not applicable or (mean is not None and mean >= minimum),
                                       applicable))
    return results
