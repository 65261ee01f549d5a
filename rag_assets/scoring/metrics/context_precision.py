"""Context precision: whether the useful contexts are ranked first (rank-aware, graded)."""

from __future__ import annotations

from typing import Any

from rag_assets.scoring import formulas
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.scoring.judge_prompts import CONTEXT_PRECISION
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import JudgeTask, Judgment, Metric


def _inputs(context: ItemContext) -> dict[str, Any]:
    return {"question": context.item.question, "reference": context.item.reference_answer, "chunks": context.chunks}


TASK = JudgeTask("context_precision", CONTEXT_PRECISION, _inputs)


def _score(context: ItemContext, judgment: Judgment) -> float:
    grades = {v["chunk_id"]: v["useful"] if v.get("score") is None else v["score"] for v in judgment["verdicts"]}
    return formulas.context_precision([grades.get(c, 0.0) for c in context.retrieved_ids])


def _record(context: ItemContext, judgment: Judgment, scores: ItemScores) -> None:
    scores.useful = {v["chunk_id"]: v["useful"] for v in judgment["verdicts"]}


def reason(judgment: Judgment) -> str:
    verdicts = judgment.get("verdicts", [])
    useful = [v["chunk_id"] for v in verdicts if v["useful"]]
    return f"{len(useful)} of {len(verdicts)} retrieved chunks useful" + (f": {', '.join(useful)}" if useful else "")


METRIC = Metric(
    name="context_precision", label="Context precision", kind="judge", task=TASK,
    definition=("Average precision of the judge's usefulness verdicts over the retrieved contexts in rank order: "
                "high when the contexts that help to arrive at the reference answer come first. A graded verdict "
                "weighs each rank by its usefulness; 0 when no context is useful."),
    score=_score, record=_record, reason=reason, headline=True,
    thresholds={"general": 0.75, "high_stakes": 0.85, "developer": 0.50, "offline": 0.40},
)
