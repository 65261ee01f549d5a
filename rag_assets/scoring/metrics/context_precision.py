"""Context precision: whether the useful contexts are ranked first (rank-aware, graded)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring import offline_judge
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.judge_text import RUBRIC, retrieved
from rag_assets.scoring.metrics.registry import IncompleteJudgment, JudgeTask, Judgment, Metric


def formula(useful: Sequence[float]) -> float:
    """Rank-aware: sum over ranks k of precision@k for each useful chunk, over the useful count
    (average precision of the usefulness verdicts); 0 when no chunk is useful or none was retrieved.
    A verdict may be graded (a usefulness in [0, 1], True and False counting 1 and 0): each rank then
    weighs its grade and precision@k is the mean grade of the first k chunks, so one chunk alone scores
    its grade and two chunks of different quality do not tie."""
    grades = np.asarray(useful, dtype=float)
    if not grades.sum() > 0:
        return 0.0
    return float(np.sum(grades * np.cumsum(grades) / np.arange(1, grades.size + 1)) / grades.sum())


def _inputs(context: ItemContext) -> dict[str, Any]:
    return {"question": context.item.question, "reference": context.item.reference_answer, "chunks": context.chunks}


def unjudged_chunks(inputs: Mapping[str, Any], judgment: Judgment) -> str | None:
    """The chunks sent without a verdict back (a judge that named other ids scored 0.000: each retrieved chunk
    taken for a useless one), or None."""
    judged = {v["chunk_id"] for v in judgment["verdicts"]}
    missing = [c["chunk_id"] for c in inputs["chunks"] if c["chunk_id"] not in judged]
    if not missing:
        return None
    return (f"no verdict for retrieved chunk {', '.join(missing[:3])}"
            + (f" and {len(missing) - 3} more" if len(missing) > 3 else ""))


class ChunkVerdict(BaseModel):
    chunk_id: str
    useful: bool = Field(description="True if the chunk helps to arrive at the reference answer.")
    score: float | None = Field(default=None, ge=0.0, le=1.0, description=(
        "Optional: how much the chunk helps, from 0 to 1; leave it out to let the verdict alone count."))


class ContextPrecisionJudgment(BaseModel):
    verdicts: list[ChunkVerdict] = Field(description="One verdict per chunk, in the order given.")


TEMPLATE = PromptTemplate(
    id="judge_context_precision", version="3",
    system=("You judge whether each retrieved chunk helps answer a question: for EVERY chunk, in order, say whether "
            "it is useful for arriving at the reference answer."),
    rules=RUBRIC, user=lambda i: f"Question: {i['question']}\n\nReference answer: {i['reference']}",
    context=retrieved, output_model=ContextPrecisionJudgment, offline=offline_judge.context_precision,
    tool_description="Record one usefulness verdict per retrieved chunk, in rank order.", max_tokens=1024,
    uncovered=unjudged_chunks,
)


TASK = JudgeTask("context_precision", TEMPLATE, _inputs)


def _score(context: ItemContext, judgment: Judgment) -> float:
    """The formula over the retrieved chunks in rank order; a chunk the judge gave no verdict is not taken for a
    useless one."""
    if gap := unjudged_chunks(_inputs(context), judgment):
        raise IncompleteJudgment(gap)
    grades = {v["chunk_id"]: v["useful"] if v.get("score") is None else v["score"] for v in judgment["verdicts"]}
    return formula([grades[c] for c in context.retrieved_ids])


def _record(context: ItemContext, judgment: Judgment, scores: ItemScores) -> None:
    scores.useful = {v["chunk_id"]: v["useful"] for v in judgment["verdicts"]}


def reason(judgment: Judgment) -> str:
    """The useful chunks, each with its grade when the judge gave one: the metric reads the grades, so a useful
    chunk among much else (a low grade) is shown as such."""
    verdicts = judgment.get("verdicts", [])
    useful = [v["chunk_id"] + ("" if v.get("score") is None else f" (grade {v['score']:.2f})")
              for v in verdicts if v["useful"]]
    return f"{len(useful)} of {len(verdicts)} retrieved chunks useful" + (f": {', '.join(useful)}" if useful else "")


METRIC = Metric(
    name="context_precision", label="Context precision", kind="judge", task=TASK,
    definition=("Average precision of the judge's usefulness verdicts over the retrieved contexts in rank order: "
                "high when the contexts that help to arrive at the reference answer come first. A graded verdict "
                "weighs each rank by its usefulness; 0 when no context is useful, or none was retrieved (an item the "
                "RAG system failed on)."),
    score=_score, record=_record, reason=reason, headline=True,
    thresholds={"general": 0.75, "high_stakes": 0.85, "developer": 0.50, "offline": 0.30},
    production_drift=(
        "retrieval returns more noise (index rebuilt, chunking or k changed, corpus grew)",
        "diff the retrieval settings and the corpus version against the last good day; re-run the golden set",
    ),
)
