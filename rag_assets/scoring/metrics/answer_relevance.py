"""Answer relevance: how fully and how directly the answer answers the question asked.

The ``answer_relevance`` judge task is asked of every item: decline accuracy reads its noncommittal
flag on the adversarial items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring import offline_judge
from rag_assets.scoring.embedding import Embedder, cosine
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.judge_text import RUBRIC
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


class QuestionPart(BaseModel):
    part: str = Field(description="One thing the question asks (the whole question if it asks one thing).")
    answered: float = Field(ge=0.0, le=1.0, description=(
        "1 if the answer fully answers this part with the kind of answer it asks for (a date or time for 'when', "
        "a number for 'how many', yes or no, a reason for 'why', the steps for 'how do I'); 0.5 if only partly; "
        "0 if not. Whether the answer is true does not matter here."))


class StatementRelevance(BaseModel):
    statement: str = Field(description="One statement of the answer.")
    addresses_question: bool = Field(description="True if the statement helps answer the question asked.")


class RelevanceJudgment(BaseModel):
    question_parts: list[QuestionPart] = Field(min_length=1, description="The parts of the question, in order.")
    statements: list[StatementRelevance] = Field(description="The answer's statements, in order.")
    noncommittal: bool = Field(description="True if the answer is evasive, vague or declines to answer.")
    questions: list[str] = Field(min_length=3, max_length=3, description=(
        "Three questions the answer answers, written as if the question were unknown."))


TEMPLATE = PromptTemplate(
    id="judge_answer_relevance", version="3",
    system=("You judge whether an answer answers the question it was asked.\n"
            "Step 1: split the question into the parts it asks (one part if it asks one thing) and say how fully "
            "the answer answers each, with the kind of answer the part asks for (a date for 'when', a number "
            "for 'how many', yes or no, a reason for 'why', the steps for 'how do I'): 1, 0.5 or 0.\n"
            "Step 2: split the answer into its statements and say of each whether it addresses the question "
            "(not whether it is true).\n"
            "Step 3: say whether the answer is noncommittal (evasive, vague, or declining to answer).\n"
            "Step 4: write three different questions that this answer answers, as if you had not seen the question."),
    rules=RUBRIC, user=lambda i: f"Question: {i['question']}\n\nAnswer:\n{i['answer']}",
    output_model=RelevanceJudgment, offline=offline_judge.answer_relevance,
    tool_description="Record the question's parts, the answer's statements, the noncommittal flag and three "
                     "reverse questions.", max_tokens=1024,
)


TASK = JudgeTask("answer_relevance", TEMPLATE, _inputs)


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
                "to three questions the answer answers (ragas). An item the RAG system failed on scores 0."),
    score=_score, reason=reason, headline=True,
    thresholds={"general": 0.80, "high_stakes": 0.85, "developer": 0.60, "offline": 0.20},
    production_drift=(
        "answers miss the question: declines, padding, or users asking new kinds of questions",
        "read the lowest-scoring answers of the day; check decline rates and the coverage gaps of the golden set",
    ),
)
