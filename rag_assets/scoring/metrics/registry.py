"""What a metric is, in one place, and the registry every consumer iterates.

A ``Metric`` holds all that differs from one metric to the next: its name and the words the report and
the docs show, its kind, how it scores one item (a judge metric names the ``JudgeTask`` whose answer it
reads, with the prompt template and the offline scorer behind it), which question types it scores, its
default minimum per threshold profile, the drop the regression gate and the A/B comparison allow, and
the reason text an expert reads in the judge review. The evaluation, the gates, the A/B comparison, the
report, the exports and the status read metrics from the ``Registry``, never from lists of names, so a
metric is one module (see ``rag_assets.scoring.metrics``) and adding one is a new module.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.scoring.metrics.context import ItemContext

Kind = Literal["judge", "retrieval", "deterministic"]
KINDS: tuple[Kind, ...] = ("judge", "retrieval", "deterministic")
#: Which items a metric scores: every item, the answerable ones (not adversarial), or the adversarial ones.
Items = Literal["every", "answerable", "adversarial"]
ADVERSARIAL = "adversarial"
#: The threshold profiles (see ``rag_assets.scoring.thresholds``); a metric names its minimum in each it is gated in.
PROFILES = ("general", "high_stakes", "developer", "offline")
DEFAULT_ALLOWED_DROP = 0.05
#: The k of @k metric names in the profiles' defaults (``hit_rate@5``) and where no evaluation says otherwise.
DEFAULT_K = 5

Judgment = Mapping[str, Any]


class IncompleteJudgment(ValueError):
    """A well-formed judge answer that does not cover what was asked (no verdict for a retrieved chunk): raised by a
    metric's ``score`` so that the call is recorded as failed, never scored from what is missing."""


@dataclass(frozen=True)
class JudgeTask:
    """One judge call per item: its template (prompt, output model and offline scorer) and the inputs it
    sends for an item (None: no call for this item, e.g. context recall without reference statements).
    Several metrics may read one task's answer (citation accuracy reads faithfulness's)."""

    name: str
    template: PromptTemplate
    inputs: Callable[[ItemContext], dict[str, Any] | None]


@dataclass(frozen=True)
class Metric:
    """One metric. ``score(context, judgment)`` gives an item's value (NaN: undefined for it); a judge metric
    gets its task's parsed answer, the others an empty mapping. ``record`` keeps what else the metric found on the item
    (claims, hallucination counts). ``items``: the question types it scores; ``only_where_data``: its
    threshold applies only where some item gave a value or a failure (citations, document versions).
    ``at_k``: the name is completed by the evaluation's k (``precision@5``). ``reason``: the judge's answer in
    a sentence, for the experts; a metric with one is reviewed by them (``Registry.reviewed``). ``errored``: what
    an item the RAG system failed on scores, where 0 is not it (see ``score_errored``)."""

    name: str
    label: str
    definition: str
    kind: Kind
    score: Callable[[ItemContext, Judgment], float]
    task: JudgeTask | None = None
    items: Items = "answerable"
    only_where_data: bool = False
    thresholds: Mapping[str, float] = field(default_factory=dict)
    allowed_drop: float = DEFAULT_ALLOWED_DROP
    higher_is_better: bool = True
    at_k: bool = False
    headline: bool = False  # one of the figures shown beside each evaluation (status, summaries)
    when_low: str = ""  # what the diagnosis says when its mean is low, whatever the other metrics say
    #: Scored on production traffic (reference-free): what a drop there likely means, and the first action.
    production_drift: tuple[str, str] | None = None
    record: Callable[[ItemContext, Judgment, ItemScores], None] | None = None
    reason: Callable[[Judgment], str] | None = None
    errored: Callable[[ItemContext], float] | None = None

    def score_errored(self, context: ItemContext) -> float:
        """The value of an item the RAG system failed on (``context``: its response answers nothing and retrieved
        nothing), NaN where the metric would not have scored it. The worst the metric gives, never a value that
        leaves the item out of a mean it would have been in: raising on the items a system would miss must not
        lift its figures. ``errored`` when given; else a retrieval metric's own score of retrieving nothing (0
        where the item has evidence, NaN where none), and 0 for the others: no judge is asked about an item with
        no answer, and a formula of an empty answer may credit it (a decline's faithfulness is 1)."""
        if self.errored is not None:
            return self.errored(context)
        return self.score(context, {}) if self.kind == "retrieval" else 0.0

    def key(self, k: int = DEFAULT_K) -> str:
        """The name its values are stored under in an evaluation at cutoff ``k``."""
        return f"{self.name}@{k}" if self.at_k else self.name

    def scores_type(self, question_type: str) -> bool:
        """Whether an item of ``question_type`` is one this metric scores."""
        if self.items == "every":
            return True
        return (question_type == ADVERSARIAL) == (self.items == "adversarial")

    def called_for(self, question_types: Collection[str]) -> bool:
        """Whether an evaluation of items of ``question_types`` calls for this metric."""
        return self.items == "every" or any(self.scores_type(t) for t in question_types)


def _check(metric: Metric) -> None:
    if metric.kind not in KINDS:
        raise ValueError(f"metric {metric.name}: kind must be one of {', '.join(KINDS)}, got {metric.kind!r}")
    if (metric.kind == "judge") != (metric.task is not None):
        raise ValueError(f"metric {metric.name}: a judge metric names its judge task, and only a judge metric does")
    if metric.reason is not None and metric.task is None:
        raise ValueError(f"metric {metric.name}: a reason text tells the judge's answer, so only a judge metric has one")
    if not metric.higher_is_better:
        raise ValueError(f"metric {metric.name}: the gates read minimums, so a metric must be higher-is-better "
                         "(score 1 - the figure instead)")
    unknown = sorted(set(metric.thresholds) - set(PROFILES))
    if unknown:
        raise ValueError(f"metric {metric.name}: unknown threshold profile {unknown[0]!r} "
                         f"(profiles: {', '.join(PROFILES)})")


class Registry:
    """The metrics, in the order tables and exports show them."""

    def __init__(self, metrics: Sequence[Metric] = ()) -> None:
        self._metrics: dict[str, Metric] = {}
        for metric in metrics:
            self.add(metric)

    def add(self, metric: Metric) -> None:
        _check(metric)
        if metric.name in self._metrics:
            raise ValueError(f"metric {metric.name} is registered already")
        self._metrics[metric.name] = metric

    def remove(self, name: str) -> None:
        del self._metrics[name]

    @contextmanager
    def registered(self, metric: Metric) -> Iterator[Metric]:
        """``metric`` registered for the duration of the block (tests: a toy metric seen end to end)."""
        self.add(metric)
        try:
            yield metric
        finally:
            self.remove(metric.name)

    def __iter__(self) -> Iterator[Metric]:
        return iter(tuple(self._metrics.values()))

    def __len__(self) -> int:
        return len(self._metrics)

    def get(self, name: str) -> Metric:
        try:
            return self._metrics[name]
        except KeyError:
            raise KeyError(f"no metric named {name!r} (registered: {', '.join(self._metrics)})") from None

    def find(self, key: str) -> Metric | None:
        """The metric whose values are stored under ``key`` (``precision@5`` is precision's), None if none."""
        metric = self._metrics.get(key.split("@", 1)[0])
        return metric if metric is not None and (metric.at_k or metric.name == key) else None

    def metrics(self, kind: Kind | None = None) -> tuple[Metric, ...]:
        return tuple(m for m in self._metrics.values() if kind is None or m.kind == kind)

    def names(self, kind: Kind | None = None, k: int = DEFAULT_K) -> tuple[str, ...]:
        """Every metric's stored name at cutoff ``k``: judge metrics, then retrieval, then deterministic ones."""
        kinds = KINDS if kind is None else (kind,)
        return tuple(m.key(k) for each in kinds for m in self.metrics(each))

    def reviewed(self) -> tuple[Metric, ...]:
        """The judge's own verdicts that experts review (those with a reason text)."""
        return tuple(m for m in self._metrics.values() if m.reason is not None)

    def headline(self, k: int = DEFAULT_K) -> tuple[str, ...]:
        return tuple(m.key(k) for m in self._metrics.values() if m.headline)

    def tasks(self) -> tuple[JudgeTask, ...]:
        """The judge tasks, in the order of the first metric that reads each."""
        found: dict[str, JudgeTask] = {}
        for metric in self._metrics.values():
            if metric.task is not None:
                found.setdefault(metric.task.name, metric.task)
        return tuple(found.values())

    def readers(self, task: JudgeTask) -> tuple[Metric, ...]:
        return tuple(m for m in self._metrics.values() if m.task is not None and m.task.name == task.name)

    def profile(self, profile: str, k: int = DEFAULT_K) -> dict[str, float]:
        """A profile's minimums by stored name, the @k metrics at the evaluation's ``k`` (a minimum on a cut-off the
        evaluation never computed would fail a metric that does not apply)."""
        if profile not in PROFILES:
            raise KeyError(profile)
        return {m.key(k): m.thresholds[profile] for m in self._metrics.values() if profile in m.thresholds}

    def allowed_drop(self, key: str) -> float:
        metric = self.find(key)
        return metric.allowed_drop if metric is not None else DEFAULT_ALLOWED_DROP
