"""Context recall: the share of the reference answer's statements the retrieved contexts support.

The statements are extracted once per golden item when its golden version is built; an item without
them gets no call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring import offline_judge
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.judge_text import RUBRIC, retrieved
from rag_assets.scoring.metrics.reasons import quoted
from rag_assets.scoring.metrics.registry import IncompleteJudgment, JudgeTask, Judgment, Metric


def formula(attributed: Sequence[bool]) -> float:
    """Attributed reference statements / all statements (NaN without statements)."""
    return math.nan if not attributed else sum(attributed) / len(attributed)


def _inputs(context: ItemContext) -> dict[str, Any] | None:
    if not context.statements:
        return None
    return {"statements": list(context.statements), "chunks": context.chunks}


def unattributed_statements(inputs: Mapping[str, Any], judgment: Judgment) -> str | None:
    """A count of verdicts other than one per statement sent, or None: the formula reads the verdicts, so a
    judge that added statements of its own raised recall and one that left some out judged a shorter reference."""
    sent, judged = len(inputs["statements"]), len(judgment["statements"])
    return None if judged == sent else f"{judged} verdicts for the {sent} reference statements sent"


class StatementAttribution(BaseModel):
    statement: str
    attributed: bool = Field(description="True if the chunks support the statement.")
    chunk_id: str | None = None


class ContextRecallJudgment(BaseModel):
    statements: list[StatementAttribution] = Field(description="One entry per statement, in the order given.")


TEMPLATE = PromptTemplate(
    id="judge_context_recall", version="3",
    system=("You check which statements of a reference answer the retrieved chunks support: for EVERY statement, in "
            "order, say whether the chunks support it and which chunk does."),
    rules=RUBRIC, user=lambda i: "Statements:\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(i["statements"], start=1)),
    context=retrieved, output_model=ContextRecallJudgment, offline=offline_judge.context_recall,
    tool_description="Record, per statement, whether the retrieved chunks support it.", max_tokens=1024,
    uncovered=unattributed_statements,
)


TASK = JudgeTask("context_recall", TEMPLATE, _inputs)


def _score(context: ItemContext, judgment: Judgment) -> float:
    if gap := unattributed_statements({"statements": context.statements}, judgment):
        raise IncompleteJudgment(gap)
    return formula([s["attributed"] for s in judgment["statements"]])


def reason(judgment: Judgment) -> str:
    statements = judgment.get("statements", [])
    missing = [s["statement"] for s in statements if not s["attributed"]]
    text = f"{len(statements) - len(missing)} of {len(statements)} reference statements supported by the contexts"
    shown = quoted([f"\"{m}\"" for m in missing])
    return text + (f"; unsupported: {shown}" if missing else "")


METRIC = Metric(
    name="context_recall", label="Context recall", kind="judge", task=TASK,
    definition=("Share of the reference answer's statements that the retrieved contexts support: whether retrieval "
                "found everything the answer needs. Undefined without reference statements. An item the RAG system "
                "failed on retrieved nothing: 0."),
    score=_score,
    reason=reason, headline=True, errored=lambda context: 0.0 if context.statements else math.nan,
    thresholds={"general": 0.70, "high_stakes": 0.85, "developer": 0.50, "offline": 0.70},
)
