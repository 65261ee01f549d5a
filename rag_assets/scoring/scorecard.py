"""An evaluation's aggregates and its three gates (thresholds, regression, judge failure budget)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from rag_assets.rag.error_budget import ErrorBudget
from rag_assets.scoring.aggregate import Aggregate, aggregate_all, aggregate_by_type
from rag_assets.scoring.evaluate import (EvaluationOutcome, ItemScores, JudgeFailureBudget, MetricFailures,
                                        metric_failures)
from rag_assets.scoring.gates import ItemKey, RegressionResult, regression_gate
from rag_assets.scoring.thresholds import ThresholdResult, check_thresholds
from rag_assets.text.markdown import markdown_table

#: The judge failure budget: the share of a judge metric's items the judge may fail on before the evaluation fails.
MAX_JUDGE_FAILURE_RATE = 0.05


@dataclass
class Scorecard:
    overall: dict[str, Aggregate]
    per_type: dict[str, dict[str, Aggregate]]
    hallucinations: dict[str, int]
    rag_errors: int
    items: list[ItemScores]
    judge_failure_rate: float
    #: per judge metric, the judge's failures among the items it was asked to score (the budget's figures)
    judge_failures: tuple[MetricFailures, ...] = ()
    #: citations of an id the system did not return, over every item: what lowered citation accuracy, counted
    fabricated_citations: int = 0

    @classmethod
    def build(cls, outcome: EvaluationOutcome, metrics: Sequence[str]) -> Scorecard:
        """The aggregates over every item, those the RAG system failed on included at the values
        ``score_errored`` gave them: the gates, the report and the regression test read these."""
        hallucinations: Counter[str] = Counter()
        for item in outcome.items:
            hallucinations.update(item.hallucinations)
        return cls(aggregate_all(outcome.items, metrics), aggregate_by_type(outcome.items, metrics),
                   {v: hallucinations.get(v, 0) for v in ("out_of_context", "inconsistency", "fabrication")},
                   sum(1 for i in outcome.items if i.rag_error), outcome.items, outcome.judge_failure_rate,
                   tuple(metric_failures(outcome.items, metrics, outcome.k)),
                   sum(i.fabricated_citations for i in outcome.items))

    def as_dict(self) -> dict:
        return {"overall": {m: a.as_dict() for m, a in self.overall.items()},
                "per_type": {t: {m: a.as_dict() for m, a in aggs.items()} for t, aggs in self.per_type.items()},
                "hallucinations": self.hallucinations, "fabricated_citations": self.fabricated_citations,
                "rag_errors": self.rag_errors,
                "judge_failure_rate": self.judge_failure_rate}

    def values(self) -> tuple[dict[ItemKey, dict[str, float]], dict[ItemKey, str]]:
        return ({(i.item_id, i.revision): dict(i.values) for i in self.items},
                {(i.item_id, i.revision): i.question_type for i in self.items})

    def failure_rows(self) -> list[tuple[str, str, str]]:
        return [(i.item_id, metric, why) for i in self.items for metric, why in sorted(i.failures.items())] + [
            (i.item_id, "rag_error", i.rag_error) for i in self.items if i.rag_error]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@dataclass
class Gates:
    thresholds: list[ThresholdResult]
    regressions: list[RegressionResult]
    baseline_id: str | None
    failure_rate: float  # of all judge calls, shown; the budget is per metric (judge_budget)
    max_failure_rate: float
    notes: list[str] = field(default_factory=list)
    #: the RAG run's error budget where the gates stand alone (the Python API); the assets gate it before any
    #: scoring, as rag_answers' blocking check
    rag_errors: ErrorBudget | None = None
    judge_failures: tuple[MetricFailures, ...] = ()

    @property
    def judge_budget(self) -> JudgeFailureBudget:
        """The judge failure budget, per metric: what the judge_failure_budget check, the report, ``gates`` and
        ``assert_quality`` of the Python API all decide by."""
        return JudgeFailureBudget(self.judge_failures, self.max_failure_rate)

    @property
    def thresholds_passed(self) -> bool:
        return all(t.passed for t in self.thresholds)

    @property
    def regression_passed(self) -> bool:
        return not any(r.failed for r in self.regressions)

    @property
    def failure_budget_passed(self) -> bool:
        return self.judge_budget.passed

    def failure_budget_text(self) -> str:
        return self.judge_budget.describe()

    @property
    def rag_error_budget_passed(self) -> bool:
        return self.rag_errors is None or self.rag_errors.passed

    @property
    def passed(self) -> bool:
        return (self.thresholds_passed and self.regression_passed and self.failure_budget_passed
                and self.rag_error_budget_passed)

    def thresholds_text(self) -> str:
        failed = [t for t in self.thresholds if not t.passed]
        inapplicable = [t.metric for t in self.thresholds if not t.applicable]
        if not failed:
            gated = len(self.thresholds) - len(inapplicable)
            return f"all {gated} metrics at or above their minimum" + (
                f" ({', '.join(inapplicable)}: not applicable)" if inapplicable else "")
        return "below minimum: " + ", ".join(f"{t.metric} {_fmt(t.mean)} < {t.minimum:.2f}" for t in failed)

    def thresholds_markdown(self) -> str:
        return markdown_table(["metric", "mean", "minimum", "status"],
                              [(t.metric, _fmt(t.mean), f"{t.minimum:.2f}", t.status) for t in self.thresholds])

    def regression_text(self) -> str:
        if self.baseline_id is None:
            return "no baseline yet: the first passing evaluation becomes it"
        failed = [r for r in self.regressions if r.failed]
        noted = "".join(f"; {note}" for note in self.notes)
        if not failed:
            return f"no significant regression against {self.baseline_id} ({len(self.regressions)} comparisons){noted}"
        return "significant drops: " + "; ".join(
            f"{r.metric} ({r.scope}) {r.baseline_mean:.3f} -> {r.current_mean:.3f}, p={r.p_value:.4f}, "
            f"worse: {', '.join(w[0] for w in r.worse_items[:5])}" for r in failed) + noted

    def regression_markdown(self) -> str:
        return markdown_table(
            ["metric", "scope", "n", "baseline", "current", "drop", "allowed", "p", "status", "worse items"],
            [(r.metric, r.scope, r.n, f"{r.baseline_mean:.3f}", f"{r.current_mean:.3f}", f"{r.drop:+.3f}",
              f"{r.allowed_drop:.2f}", f"{r.p_value:.4f}", "FAIL" if r.failed else "pass",
              ", ".join(f"{w[0]} ({w[1]:.2f}->{w[2]:.2f})" for w in r.worse_items[:5]))
             for r in sorted(self.regressions, key=lambda r: (not r.failed, r.metric, r.scope))])

    def as_dict(self) -> dict:
        return {"passed": self.passed, "thresholds": [asdict(t) for t in self.thresholds],
                "regressions": [asdict(r) for r in self.regressions if r.failed or r.scope == "overall"],
                "baseline_id": self.baseline_id, "failure_rate": self.failure_rate,
                "max_failure_rate": self.max_failure_rate, "notes": list(self.notes),
                "judge_failures": [{"metric": m.metric, "failed": m.failed, "items": m.items}
                                   for m in self.judge_failures]}  # the counts; each item's error is kept with it


def score_gates(card: Scorecard, thresholds: Mapping[str, float], baseline_id: str | None,
                baseline_values: Mapping[ItemKey, Mapping[str, float]] | None, alpha: float,
                allowed: Mapping[str, float], max_failure_rate: float) -> Gates:
    regressions: list[RegressionResult] = []
    if baseline_values is not None:
        current, types = card.values()
        regressions = regression_gate(baseline_values, current, types, list(card.overall), alpha, allowed)
    types = {i.question_type for i in card.items}
    return Gates(check_thresholds(card.overall, thresholds, types), regressions, baseline_id, card.judge_failure_rate,
                 max_failure_rate, judge_failures=card.judge_failures)
