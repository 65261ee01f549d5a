"""Two evaluations item by item: what changed, and whether it is more than noise.

The per-metric paired tests are the A/B comparison's (:func:`rag_assets.scoring.ab.compare_systems`,
pairing by :func:`rag_assets.scoring.gates.paired_scopes`, test from
:mod:`rag_assets.scoring.significance`): A is the "current" side, B the "candidate". On top of that,
per item: every metric's value on both sides, the two answers side by side, and whether the item
flipped between pass and fail. An item passes when every compared metric that has a threshold in A's
gates meets it (a metric the item has no value for does not count). The metrics compared are the caller's: when
another judge configuration scored one side, those no judge scores (``calibration.models.comparable_metrics``),
and the diff's ``note`` says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.scoring.ab import ABComparison, compare_systems
from rag_assets.scoring.evaluate import JudgeFailureBudget, MetricFailures
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE
from rag_assets.scoring.gates import ItemKey
from rag_assets.text.markdown import escape_markdown, markdown_table

__all__ = ["EvaluationDiff", "ItemChange", "diff_evaluations", "diff_from_store", "item_passes"]


@dataclass(frozen=True)
class ItemChange:
    item_id: str
    revision: int
    question_type: str
    values: Mapping[str, tuple[float | None, float | None]]  # metric -> (A, B)
    answer_a: str | None
    answer_b: str | None
    passed_a: bool | None  # None: the item was not scored on that side
    passed_b: bool | None

    @property
    def flipped(self) -> bool:
        return self.passed_a is not None and self.passed_b is not None and self.passed_a != self.passed_b

    def delta(self, metric: str) -> float | None:
        a, b = self.values.get(metric, (None, None))
        return None if a is None or b is None else b - a

    def delta_summary(self) -> str:
        """The metrics that moved, as "faithfulness -0.700; context_recall +0.050": the markdown diff and
        the HTML report's baseline section both show it."""
        return "; ".join(f"{m} {d:+.3f}" for m in self.values if (d := self.delta(m)))


@dataclass(frozen=True)
class EvaluationDiff:
    a_id: str
    b_id: str
    comparison: ABComparison
    items: tuple[ItemChange, ...]
    metrics: tuple[str, ...]
    note: str = ""  # why some metrics were not compared (judge-scored ones, another judge), "" when none was left out

    @property
    def flips(self) -> list[ItemChange]:
        return [i for i in self.items if i.flipped]

    @property
    def changed(self) -> list[ItemChange]:
        """Items whose answer or any metric changed, the largest move first."""
        moved = [i for i in self.items if i.answer_a != i.answer_b or any(a != b for a, b in i.values.values())]
        return sorted(moved, key=lambda i: (-max((abs(i.delta(m) or 0.0) for m in i.values), default=0.0), i.item_id))

    def markdown(self) -> str:
        flips = [[i.item_id, i.question_type, _state(i.passed_a), _state(i.passed_b), i.delta_summary()]
                 for i in self.flips]
        changed = [[i.item_id, *(f"{d:+.3f}" if (d := i.delta(m)) is not None else "—" for m in self.metrics),
                    _one_line(i.answer_a), _one_line(i.answer_b)] for i in self.changed]
        return "\n".join([
            f"# {escape_markdown(self.a_id)} (A) → {escape_markdown(self.b_id)} (B)", "",
            f"{len(self.items)} items, {len(self.changed)} changed, {len(self.flips)} flipped pass/fail.", "",
            *([f"**Note:** {escape_markdown(self.note)}", ""] if self.note else []),
            self.comparison.markdown().replace("## A/B comparison", "## Paired tests per metric (B vs A)"),
            "## Items that flipped pass/fail", "",
            markdown_table(["item", "type", "A", "B", "metric deltas"], flips, limit=1000) if flips else "_none_", "",
            "## Items that changed (B - A)", "",
            markdown_table(["item", *self.metrics, "answer A", "answer B"], changed, limit=1000) if changed else "_none_",
        ]) + "\n"


def _state(passed: bool | None) -> str:
    return "—" if passed is None else ("pass" if passed else "fail")


def _one_line(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split()) or "—"
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def item_passes(values: Mapping[str, float], thresholds: Mapping[str, float]) -> bool:
    return all(values[m] >= minimum for m, minimum in thresholds.items() if m in values)


def diff_evaluations(a_id: str, b_id: str, a_values: Mapping[ItemKey, Mapping[str, float]],
                     b_values: Mapping[ItemKey, Mapping[str, float]], types: Mapping[ItemKey, str],
                     a_answers: Mapping[str, str | None], b_answers: Mapping[str, str | None],
                     thresholds: Mapping[str, float], metrics: Sequence[str], note: str = "",
                     unjudged: Mapping[str, JudgeFailureBudget] | None = None) -> EvaluationDiff:
    """Compare B with A on ``metrics`` only: the paired tests per metric and every item's change, an item passing
    or failing by the ``thresholds`` of those metrics (``note``: why others were left out). ``unjudged``: each
    evaluation's judge failure budget by its id; one over it cannot be compared (REVIEW, never REJECT), as an A/B
    comparison whose judge failed."""
    used = tuple(m for m in metrics if any(m in v for v in (*a_values.values(), *b_values.values())))
    thresholds = {m: minimum for m, minimum in thresholds.items() if m in used}
    comparison = compare_systems(a_values, b_values, types, used, unjudged=unjudged)
    items = []
    for key in sorted(set(a_values) | set(b_values)):
        a, b = a_values.get(key), b_values.get(key)
        values = {m: ((a or {}).get(m), (b or {}).get(m)) for m in used if m in (a or {}) or m in (b or {})}
        items.append(ItemChange(key[0], key[1], types.get(key, ""), values, a_answers.get(key[0]),
                                b_answers.get(key[0]), None if a is None else item_passes(a, thresholds),
                                None if b is None else item_passes(b, thresholds)))
    return EvaluationDiff(a_id, b_id, comparison, tuple(items), used, note)


def stored_judge_budget(gates: Mapping) -> JudgeFailureBudget:
    """The judge failure budget a stored evaluation was gated by (its ``gates``: per metric, the judge's failed calls
    among its items, and the budget's rate)."""
    return JudgeFailureBudget(tuple(MetricFailures(m["metric"], m["failed"], m["items"])
                                    for m in gates.get("judge_failures", [])),
                              gates.get("max_failure_rate", MAX_JUDGE_FAILURE_RATE))


def _answers(rag_repo, run_id: str) -> dict[str, str | None]:
    return {r.item_id: r.answer for r in rag_repo.results(run_id)}


def diff_from_store(evaluations, rag_repo, a_id: str, b_id: str, metrics: Sequence[str],
                    note: str = "") -> EvaluationDiff:
    """The diff of two stored evaluations on ``metrics``; thresholds are A's. Raises KeyError naming a missing one."""
    records = {eid: evaluations.get(eid) for eid in (a_id, b_id)}
    missing = [eid for eid, record in records.items() if record is None]
    if missing:
        raise KeyError(f"no evaluation {', '.join(map(repr, missing))}")
    a_values, a_types = evaluations.item_values(a_id)
    b_values, b_types = evaluations.item_values(b_id)
    thresholds = {t["metric"]: t["minimum"] for t in records[a_id].gates.get("thresholds", [])}
    return diff_evaluations(a_id, b_id, a_values, b_values, {**b_types, **a_types},
                            _answers(rag_repo, records[a_id].rag_run_id), _answers(rag_repo, records[b_id].rag_run_id),
                            thresholds, metrics, note,
                            unjudged={eid: stored_judge_budget(record.gates) for eid, record in records.items()})

