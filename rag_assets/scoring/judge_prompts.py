"""The judge's prompt templates: four calls per item for the core metrics, at most.

- faithfulness: ONE call extracts the answer's claims and verifies ALL of them against the
  retrieved chunks (verdict and supporting chunks per claim); citation accuracy and temporal
  faithfulness are derived from it at no extra call;
- answer relevance: ONE call splits the question into its parts and says how fully the answer answers
  each (with the kind of answer it asks for), says per answer statement whether it addresses the
  question, flags a noncommittal answer, and writes three reverse questions (ragas) that only a
  semantic embedder uses;
- context precision: ONE call judges every retrieved chunk at once;
- context recall: the reference answer's statements are extracted once per golden item (when its
  golden version is built, stored with the item), then ONE call per evaluation attributes them.
Pointwise prompts with a rubric that ignores length and style (verbosity bias) and never ask which
of two answers is better (position bias); the judge model is configured apart from the generator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate, in_suite
from rag_assets.scoring import offline_judge

RUBRIC = ("Judge only what the text says against the evidence given. Length, style, confidence and politeness "
          "earn nothing. Do not use outside knowledge to excuse or to fault a statement.")


def _chunks(inputs: Mapping[str, Any]) -> str:
    return "\n\n".join(f"[{c['chunk_id']}] (version {c.get('version') or 'unversioned'})\n{c['text']}"
                       for c in inputs["chunks"]) or "(no chunks were retrieved)"


def _retrieved(inputs: Mapping[str, Any]) -> str:
    """The item context the judge calls about one answer share (sent before their own parts, to be cached)."""
    return f"Retrieved chunks, in rank order:\n\n{_chunks(inputs)}"


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


class ChunkVerdict(BaseModel):
    chunk_id: str
    useful: bool = Field(description="True if the chunk helps to arrive at the reference answer.")
    score: float | None = Field(default=None, ge=0.0, le=1.0, description=(
        "Optional: how much the chunk helps, from 0 to 1; leave it out to let the verdict alone count."))


class ContextPrecisionJudgment(BaseModel):
    verdicts: list[ChunkVerdict] = Field(description="One verdict per chunk, in the order given.")


class ReferenceStatements(BaseModel):
    statements: list[str] = Field(description="The atomic statements of the reference answer.")


class StatementAttribution(BaseModel):
    statement: str
    attributed: bool = Field(description="True if the chunks support the statement.")
    chunk_id: str | None = None


class ContextRecallJudgment(BaseModel):
    statements: list[StatementAttribution] = Field(description="One entry per statement, in the order given.")


FAITHFULNESS = PromptTemplate(
    id="judge_faithfulness", version="3",
    system=("You check a RAG answer against the retrieved chunks it was given: split the answer into atomic factual "
            "claims and give each a verdict and its supporting chunks."),
    rules=RUBRIC, user=lambda i: f"Question: {i['question']}\n\nAnswer:\n{i['answer']}",
    context=_retrieved, output_model=FaithfulnessJudgment, offline=offline_judge.faithfulness,
    tool_description="Record every claim of the answer with its verdict and supporting chunk ids.", max_tokens=2048,
)

ANSWER_RELEVANCE = PromptTemplate(
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

CONTEXT_PRECISION = PromptTemplate(
    id="judge_context_precision", version="3",
    system=("You judge whether each retrieved chunk helps answer a question: for EVERY chunk, in order, say whether "
            "it is useful for arriving at the reference answer."),
    rules=RUBRIC, user=lambda i: f"Question: {i['question']}\n\nReference answer: {i['reference']}",
    context=_retrieved, output_model=ContextPrecisionJudgment, offline=offline_judge.context_precision,
    tool_description="Record one usefulness verdict per retrieved chunk, in rank order.", max_tokens=1024,
)

REFERENCE_STATEMENTS = PromptTemplate(
    id="extract_reference_statements", version="1",
    system="You split a reference answer into atomic, self-contained statements without adding anything.",
    user=lambda i: f"Question: {i['question']}\n\nReference answer:\n{i['reference']}",
    output_model=ReferenceStatements, offline=offline_judge.reference_statements,
    tool_description="Record the atomic statements of the reference answer.", max_tokens=1024,
)

CONTEXT_RECALL = PromptTemplate(
    id="judge_context_recall", version="3",
    system=("You check which statements of a reference answer the retrieved chunks support: for EVERY statement, in "
            "order, say whether the chunks support it and which chunk does."),
    rules=RUBRIC, user=lambda i: "Statements:\n" + "\n".join(f"{n}. {s}" for n, s in enumerate(i["statements"], start=1)),
    context=_retrieved, output_model=ContextRecallJudgment, offline=offline_judge.context_recall,
    tool_description="Record, per statement, whether the retrieved chunks support it.", max_tokens=1024,
)

# One suite: every judge call carries the four tasks' tools and instructions (the rubric stated once), so the
# calls about one item share their prompt prefix up to its retrieved chunks (Anthropic prompt caching,
# rag_assets.llm.templates). Each task's steps are static, so they sit in its instructions, in that cached
# prefix; the user turn holds only what differs per call.
JUDGE_TEMPLATES = FAITHFULNESS, ANSWER_RELEVANCE, CONTEXT_PRECISION, CONTEXT_RECALL = in_suite(
    "judge", "You judge the answers of a retrieval-augmented generation (RAG) system. Each request names one of "
    "the tasks below and forces its tool: do that task only, by its instructions.",
    (FAITHFULNESS, ANSWER_RELEVANCE, CONTEXT_PRECISION, CONTEXT_RECALL))
