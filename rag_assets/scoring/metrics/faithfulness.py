"""Faithfulness: the share of the answer's claims grounded in the retrieved contexts.

One judge call per item extracts the answer's claims and verifies all of them (the ``faithfulness``
task); citation accuracy and temporal faithfulness read the same answer at no extra call. A judge answer with no
claim for an answer that states something has not judged it (see ``unextracted_claims``): none of them scores it
(see ``judged``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring import offline_judge
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.scoring.metrics.context import ItemContext
from rag_assets.scoring.metrics.judge_text import RUBRIC, retrieved
from rag_assets.scoring.metrics.reasons import quoted
from rag_assets.scoring.metrics.registry import IncompleteJudgment, JudgeTask, Judgment, Metric
from rag_assets.scoring.offline_judge.text import is_decline, statements


VERDICTS = ("grounded", "out_of_context", "inconsistency", "fabrication")


#: the credit a claim's graded support can give under each verdict: the verdict decides what a claim is, the
#: support only orders claims of one verdict (a judge's "fabrication" with support 1.0 counted as grounded)
CREDIT_RANGE = {"grounded": (0.5, 1.0), "out_of_context": (0.0, 0.5), "inconsistency": (0.0, 0.0),
                "fabrication": (0.0, 0.0)}


def credit(claim: Mapping[str, Any]) -> float:
    """1 for a grounded claim and 0 for any other; a graded ``support`` counts instead, within its verdict's range."""
    low, high = CREDIT_RANGE[claim["verdict"]]
    support = claim.get("support")
    return float(claim["verdict"] == "grounded") if support is None else min(max(float(support), low), high)


def formula(judgment: Mapping[str, Any]) -> tuple[float, dict[str, int]]:
    """Grounded claims / all claims. An answer with no claim (a decline) claims nothing unsupported: 1.0 (a
    judgment with no claim for an answer that states something is never scored: see ``unextracted_claims``).
    A claim may carry a graded ``support`` in [0, 1] (the offline judge's): it then counts that instead of
    1 or 0 (see ``credit``), so two answers whose unsupported claims are unsupported to different degrees do not
    tie."""
    counts = Counter(c["verdict"] for c in judgment["claims"])
    total = sum(counts.values())
    credit_sum = sum(credit(c) for c in judgment["claims"])
    return (1.0 if total == 0 else credit_sum / total), {v: counts.get(v, 0) for v in VERDICTS}


def _inputs(context: ItemContext) -> dict[str, Any]:
    return {"question": context.item.question, "answer": context.response.answer or "", "chunks": context.chunks}


def unextracted_claims(inputs: Mapping[str, Any], judgment: Judgment) -> str | None:
    """What an answer with no claim leaves unjudged, or None: an answer stating something (a statement of the
    offline judge's reader that is neither a question nor a decline) that the judge found no claim in scored
    1.0, as a decline does. A judge that answered no claims for every answer passed the faithfulness gate at
    1.000. The offline judge's claims are those statements, so it never leaves one out."""
    if judgment["claims"]:
        return None
    question = str(inputs.get("question") or "")
    stated = [s for s in statements(str(inputs.get("answer") or "")) if not is_decline(s, question)]
    if not stated:
        return None
    return (f"no claim extracted from an answer that makes {len(stated)} statement{'s' if len(stated) > 1 else ''}: "
            f"\"{stated[0][:100]}\"" + (" and more" if len(stated) > 1 else ""))


class ClaimVerdict(BaseModel):
    claim: str = Field(description="One atomic factual claim of the answer, as a standalone sentence.")
    verdict: Literal["grounded", "out_of_context", "inconsistency", "fabrication"] = Field(description=(
        "grounded: stated in or directly implied by the chunks; out_of_context: not in the chunks and not "
        "contradicting them (outside knowledge or extrapolation); inconsistency: contradicts the chunks; "
        "fabrication: invents specifics (numbers, names, settings, features) found nowhere in the chunks."))
    supporting_chunk_ids: list[str] = Field(default_factory=list, description="Chunks that support a grounded claim.")
    support: float | None = Field(default=None, ge=0.0, le=1.0, description=(
        "Optional: how much of the claim the chunks state, from 0 to 1; leave it out to let the verdict alone count."))


class FaithfulnessJudgment(BaseModel):
    claims: list[ClaimVerdict] = Field(description="Empty when the answer makes no factual claim (e.g. it declines).")


TEMPLATE = PromptTemplate(
    id="judge_faithfulness", version="3",
    system=("You check a RAG answer against the retrieved chunks it was given: split the answer into atomic factual "
            "claims and give each a verdict and its supporting chunks."),
    rules=RUBRIC, user=lambda i: f"Question: {i['question']}\n\nAnswer:\n{i['answer']}",
    context=retrieved, output_model=FaithfulnessJudgment, offline=offline_judge.faithfulness,
    tool_description="Record every claim of the answer with its verdict and supporting chunk ids.", max_tokens=2048,
    uncovered=unextracted_claims,
)


TASK = JudgeTask("faithfulness", TEMPLATE, _inputs)


def judged(context: ItemContext, judgment: Judgment) -> Judgment:
    """``judgment`` when it judged the item's answer; ``IncompleteJudgment`` when it found no claim in an answer that
    states something. Every metric that reads this judgment checks it here before reading its claims, so a judge
    that judged nothing is a failure of each of them, in the failure budget, never a score (a 1 here, a 0 for a
    correct citation)."""
    if gap := unextracted_claims(_inputs(context), judgment):
        raise IncompleteJudgment(gap)
    return judgment


def _score(context: ItemContext, judgment: Judgment) -> float:
    """The formula; no claim from an answer that states something is not taken for a decline."""
    return formula(judged(context, judgment))[0]


def _record(context: ItemContext, judgment: Judgment, scores: ItemScores) -> None:
    """The claims and the count of each hallucination type (every verdict but grounded)."""
    counts = formula(judgment)[1]
    scores.hallucinations = {v: n for v, n in counts.items() if v != "grounded"}
    scores.claims = [dict(claim) for claim in judgment["claims"]]


def reason(judgment: Judgment) -> str:
    claims = judgment.get("claims", [])
    if not claims:
        return "the answer makes no factual claim"
    off = [c for c in claims if c["verdict"] != "grounded"]
    text = f"{len(claims) - len(off)} of {len(claims)} claims grounded in the contexts"
    shown = quoted([f"\"{c['claim']}\" ({c['verdict']})" for c in off])
    return text + (f"; not grounded: {shown}" if off else "")


METRIC = Metric(
    name="faithfulness", label="Faithfulness", kind="judge", task=TASK, items="every",
    definition=("Share of the answer's claims that the retrieved contexts support. The judge splits the answer into "
                "atomic claims and gives each a verdict: grounded, out_of_context (not in the contexts), "
                "inconsistency (contradicts them) or fabrication (invents specifics); a graded support counts in "
                "between, within its verdict's range (grounded 0.5 to 1, out_of_context 0 to 0.5, the others 0). "
                "An answer with no claim (a decline) scores 1, but a judge that finds no claim in an answer that "
                "states something has not judged it: a judge failure, not a 1. An item the RAG system failed on has "
                "no answer and scores 0: an error is not a decline."),
    score=_score,
    record=_record, reason=reason, headline=True, allowed_drop=0.03,
    thresholds={"general": 0.85, "high_stakes": 0.95, "developer": 0.70, "offline": 0.90},
    production_drift=(
        "the generator strays from the context (prompt, model or temperature changed)",
        "compare a day's unfaithful answers with their retrieved chunks; roll back the last generator change",
    ),
)
