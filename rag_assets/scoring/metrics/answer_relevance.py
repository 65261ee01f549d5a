"""Answer relevance: how fully and how directly the answer answers the question asked.

The ``answer_relevance`` judge task is asked of every item: decline accuracy reads its noncommittal
flag on the adversarial items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rag_assets.scoring.embedding import Embedder, cosine
from rag_assets.scoring.judge_prompts import ANSWER_RELEVANCE
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.registry import JudgeTask, Judgment, Metric


def formula(question: str, judgment: Mapping[str, Any], embedder: Embedder) -> float:
    """Completeness (mean of how fully each part of the question is answered) times focus (share of the
    answer's statements that address the question); 0 for a noncommittal answer. With a semantic embedder
    (never the hashing one, which rewards restating the question) the mean of that and the ragas score:
    the mean cosine similarity of the question to the three questions the answer answers."""
    if judgment["noncommittal"]:
        return 0.0
    parts, statements = judgment["question_parts"], judgment["statements"]
    completeness = sum(p["answered"] for p in parts) / len(parts)
    focus = sum(1 for s in statements if s["addresses_question"]) / len(statements) if statements else 0.0
    score = completeness * focus
    if getattr(embedder, "semantic", False):
        ragas = float(np.clip(np.mean(cosine(embedder, question, judgment["questions"])), 0.0, 1.0))
        score = (score + ragas) / 2
    return float(score)


def _inputs(context: ItemContext) -> dict[str, Any]:
    return {"question": context.item.question, "answer": context.response.answer or ""}


TASK = JudgeTask("answer_relevance", ANSWER_RELEVANCE, _inputs)


def _score(context: ItemContext, judgment: Judgment) -> float:
    if context.embedder is None:
        raise ValueError("answer relevance needs the evaluation's embedder")
    return formula(context.item.question, judgment, context.embedder)


def reason(judgment: Judgment) -> str:
    parts = "; ".join(f"\"{p['part']}\" answered {p['answered']:g}" for p in judgment.get("question_parts", []))
    statements = judgment.get("statements", [])
    addressing = sum(1 for s in statements if s["addresses_question"])
    noncommittal = ", noncommittal" if judgment.get("noncommittal") else ""
    return f"question parts: {parts}; {addressing} of {len(statements)} statements address the question{noncommittal}"


METRIC = Metric(
    name="answer_relevance", label="Answer relevance", kind="judge", task=TASK,
    definition=("Completeness (how fully each part of the question is answered, with the kind of answer it asks "
                "for) times focus (share of the answer's statements that address the question); 0 for a "
                "noncommittal answer. With a semantic embedder, the mean of that and the similarity of the question "
                "to three questions the answer answers (ragas)."),
    score=_score, reason=reason, headline=True,
    thresholds={"general": 0.80, "high_stakes": 0.85, "developer": 0.60, "offline": 0.20},
    production_drift=(
        "answers miss the question: declines, padding, or users asking new kinds of questions",
        "read the lowest-scoring answers of the day; check decline rates and the coverage gaps of the golden set",
    ),
)
