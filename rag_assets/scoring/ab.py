"""A/B comparison of a candidate RAG system with the current one on the same golden-set version.

Both systems' per-item scores (``EvaluationRepository.item_values``) are paired on the items both
scored: the same revision of the same golden item, with a defined (finite) value of the metric in
both. Each metric is compared overall and within each question type that has at least
``min_items`` paired items, with the same paired sign-flip permutation test as the regression gate,
run once in each direction (is the candidate worse? is it better?).

A comparison is a *significant regression* when the candidate's mean dropped by more than the
metric's allowed drop (``Metric.allowed_drop`` in the registry, overridable) and ``p_worse < alpha``; a
*significant improvement* when the mean rose and ``p_better < alpha``.

Recommendation, first rule that applies:

- ``REVIEW`` if it cannot be decided: on either side, the RAG system failed on more items than the RAG error
  budget (``rag_errors``, the rule of the evaluation's rag_answers_error_budget check), or the judge failed on
  more than the judge failure budget of a compared metric's items (``unjudged``). An errored answer counts at
  the worst value of every metric without a judge call, so a side whose key was revoked would "regress"
  everywhere; a failed judge call leaves the item out of that metric's pairs, so the metric would silently drop
  out of the comparison (all its calls failed) or be compared on the items the judge happened to score. These
  rules come first: a REJECT (or an APPROVE) on what failed would judge the outage, not the system; a human
  decides, or a re-run once the failures are gone. The reasons name the side, the failures and, for the judge,
  the metric.
- ``REJECT`` if overall faithfulness dropped beyond its tighter bound ``faithfulness_bound``
  (``delta < -faithfulness_bound`` and ``p_worse < alpha``): an answer that invents facts is worse
  than one that misses some, so the bound is stricter than the gate's allowed drop; or if every
  metric compared overall has a significant regression (regressions everywhere).
- ``REVIEW`` if nothing could be compared overall (no metric had ``min_items`` paired items): no
  evidence is not evidence of no regression, so a human decides.
- ``APPROVE`` if no comparison, overall or per question type, is a significant regression.
- ``REVIEW`` otherwise: significant regressions that a human weighs, not the code. With significant
  improvements it is labelled ``mixed results``; with none, ``only regressions`` (and why no REJECT rule
  applied). Only regressions stays a REVIEW on purpose: the rejecting rules are a faithfulness drop and
  regressions everywhere, and a candidate that retrieves worse but answers as faithfully (e.g. a smaller
  ``k``) can be worth what the metrics do not measure (cost, latency); the label must not call it a
  trade-off between metrics when nothing improved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rag_assets.rag.error_budget import ErrorBudget
from rag_assets.scoring.evaluate import JudgeFailureBudget
from rag_assets.scoring.gates import OVERALL, ItemKey, paired_scopes
from rag_assets.scoring.significance import paired_drop_test
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.text.markdown import escape_markdown, markdown_table

APPROVE = "APPROVE"
REJECT = "REJECT"
REVIEW = "REVIEW"
FAITHFULNESS = "faithfulness"
TOP_DIFFERING = 10


@dataclass(frozen=True)
class MetricComparison:
    """One metric in one scope (``"overall"`` or a question type), on the paired items."""

    metric: str
    scope: str
    n: int
    current_mean: float
    candidate_mean: float
    delta: float  # candidate - current
    p_worse: float  # one-sided paired p that the candidate is worse
    p_better: float  # one-sided paired p that the candidate is better
    significant_regression: bool
    significant_improvement: bool

    def describe(self) -> str:
        """The phrase reasons use: metric, scope, delta and both p-values."""
        where = "" if self.scope == OVERALL else f" [{self.scope}]"
        return (f"{self.metric}{where}: delta {self.delta:+.3f} "
                f"(p_worse={self.p_worse:.4f}, p_better={self.p_better:.4f}, n={self.n})")


@dataclass(frozen=True)
class ABComparison:
    """All comparisons, the recommendation with the reasons for it, and the items that moved most."""

    comparisons: tuple[MetricComparison, ...]
    recommendation: str  # APPROVE | REJECT | REVIEW
    reasons: tuple[str, ...]
    differing_items: tuple[tuple[str, str, float, float], ...]  # (item_id, metric, current, candidate)
    #: a REVIEW because a side's answers or judge calls failed beyond their budgets: no verdict on the systems
    undecided: bool = False

    def markdown(self) -> str:
        """A summary for a report or Dagster metadata: verdict, reasons, overall and per-type tables, items."""
        headers = ["metric", "n", "current", "candidate", "delta", "p worse", "p better", "verdict"]

        def row(c: MetricComparison) -> list[object]:
            return [c.metric, c.n, f"{c.current_mean:.3f}", f"{c.candidate_mean:.3f}", f"{c.delta:+.3f}",
                    f"{c.p_worse:.4f}", f"{c.p_better:.4f}", _verdict(c)]

        overall = [row(c) for c in self.comparisons if c.scope == OVERALL]
        per_type = [[c.scope, *row(c)] for c in self.comparisons if c.scope != OVERALL]
        parts = [f"## A/B comparison: **{escape_markdown(self.recommendation)}**", "",
                 *(f"- {escape_markdown(reason)}" for reason in self.reasons), "", "### Overall", "",
                 markdown_table(headers, overall) if overall else "_no metric had enough paired items_"]
        if per_type:
            parts += ["", "### By question type", "", markdown_table(["question type", *headers], per_type)]
        if self.differing_items:
            parts += ["", f"### Items that differ most (top {TOP_DIFFERING})", "",
                      markdown_table(["item", "metric", "current", "candidate", "difference"],
                                     [[i, m, f"{a:.3f}", f"{b:.3f}", f"{b - a:+.3f}"]
                                      for i, m, a, b in self.differing_items])]
        return "\n".join(parts) + "\n"


def _verdict(c: MetricComparison) -> str:
    if c.significant_regression:
        return "regression"
    return "improvement" if c.significant_improvement else "no significant change"


def _compare(metric: str, scope: str, before: np.ndarray, after: np.ndarray, limit: float,
             alpha: float) -> MetricComparison:
    worse = paired_drop_test(before, after)
    better = paired_drop_test(after, before)
    delta = float(after.mean() - before.mean())
    return MetricComparison(metric, scope, int(before.size), float(before.mean()), float(after.mean()), delta,
                            worse.p_value, better.p_value,
                            significant_regression=delta < -limit and worse.p_value < alpha,
                            significant_improvement=delta > 0 and better.p_value < alpha)


def compare_systems(
    current: Mapping[ItemKey, Mapping[str, float]],
    candidate: Mapping[ItemKey, Mapping[str, float]],
    types: Mapping[ItemKey, str],
    metrics: Sequence[str],
    alpha: float = 0.05,
    allowed: Mapping[str, float] | None = None,
    faithfulness_bound: float = 0.02,
    min_items: int = 3,
    unjudged: Mapping[str, JudgeFailureBudget] | None = None,
    rag_errors: Mapping[str, ErrorBudget] | None = None,
) -> ABComparison:
    """Compare ``candidate`` with ``current`` per metric (overall and per question type) and recommend.

    Scopes with fewer than ``min_items`` paired items are left out: a permutation test on two or
    three items cannot reach significance, and a table row for it would only invite guessing.
    ``unjudged``: each side's judge failure budget (side name -> budget, e.g. ``"current"``,
    ``"candidate"``); a compared metric over it on either side makes the comparison undecidable. ``rag_errors``:
    each side's RAG error budget (side name -> budget); a side over it makes the comparison undecidable too.
    """
    limits = allowed or {}
    comparisons: list[MetricComparison] = []
    moved: list[tuple[str, str, float, float]] = []
    for metric in metrics:
        limit = limits.get(metric, REGISTRY.allowed_drop(metric))
        scopes = paired_scopes(current, candidate, types, metric, 1)
        keys = scopes.get(OVERALL, [])
        for scope, scoped in scopes.items():
            if len(scoped) < min_items:
                continue
            before = np.array([current[k][metric] for k in scoped], dtype=float)
            after = np.array([candidate[k][metric] for k in scoped], dtype=float)
            comparisons.append(_compare(metric, scope, before, after, limit, alpha))
        moved += [(k[0], metric, float(current[k][metric]), float(candidate[k][metric]))
                  for k in keys if candidate[k][metric] != current[k][metric]]
    moved.sort(key=lambda m: (-abs(m[3] - m[2]), m[0], m[1]))
    undecided = (*(f"cannot be decided: {side} RAG answers: {budget.describe()}"
                   for side, budget in (rag_errors or {}).items() if not budget.passed),
                 *(f"cannot be decided: {side} {m.describe(budget.max_rate)}"
                   for side, budget in (unjudged or {}).items() for m in budget.over if m.metric in metrics))
    recommendation, reasons = _recommend(comparisons, alpha, faithfulness_bound, undecided)
    return ABComparison(tuple(comparisons), recommendation, reasons, tuple(moved[:TOP_DIFFERING]), bool(undecided))


def _recommend(comparisons: Sequence[MetricComparison], alpha: float, faithfulness_bound: float,
               undecided: Sequence[str] = ()) -> tuple[str, tuple[str, ...]]:
    """Apply the module docstring's rules; the reasons name every comparison that decided it (``undecided``: why
    it cannot be decided, per side: its RAG answers over the error budget, a metric over the judge failure budget;
    these come first, before any REJECT, and the regressions and improvements measured anyway follow them)."""
    overall = [c for c in comparisons if c.scope == OVERALL]
    regressions = [c for c in comparisons if c.significant_regression]
    improvements = [c for c in comparisons if c.significant_improvement]
    improved = tuple(f"significant improvement: {c.describe()}" for c in improvements)
    regressed = tuple(f"significant regression: {c.describe()}" for c in regressions)
    if undecided:
        return REVIEW, (*undecided, *regressed, *improved)
    faithfulness_drops = [c for c in overall if c.metric == FAITHFULNESS
                          and c.delta < -faithfulness_bound and c.p_worse < alpha]
    if faithfulness_drops:
        drop = faithfulness_drops[0]
        others = tuple(f"significant regression: {c.describe()}" for c in regressions if c is not drop)
        return REJECT, (f"faithfulness dropped beyond its bound {faithfulness_bound:.3f}: {drop.describe()}",
                        *others, *improved)
    if overall and all(c.significant_regression for c in overall):
        return REJECT, (f"regressions everywhere: all {len(overall)} metrics compared overall regressed "
                        f"significantly", *regressed, *improved)
    if not overall:
        return REVIEW, ("no metric had enough paired items to compare; nothing supports an approval",)
    if not regressions:
        return APPROVE, (f"no significant regression in {len(comparisons)} comparisons "
                         f"(overall and per question type)", *improved)
    return REVIEW, (_weigh(overall, regressions, improvements, faithfulness_bound), *regressed, *improved)


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _weigh(overall: Sequence[MetricComparison], regressions: Sequence[MetricComparison],
           improvements: Sequence[MetricComparison], faithfulness_bound: float) -> str:
    """The first reason of a REVIEW with significant regressions: "mixed" only when something also improved; with
    none, "only regressions", with why no REJECT rule applied, so the label never promises a trade-off there is not."""
    regressed = _count(len(regressions), "significant regression")
    if improvements:
        return f"mixed results: {regressed} and {_count(len(improvements), 'significant improvement')}"
    steady = ", ".join(c.metric for c in overall if not c.significant_regression)
    return (f"only regressions: {regressed} and no significant improvement; no REJECT rule applies (faithfulness "
            f"did not drop significantly beyond its bound {faithfulness_bound:.3f}; not significant overall: {steady})")
