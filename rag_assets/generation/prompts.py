"""The question-generation prompt: one versioned template for every question type.

Bump ``VERSION`` whenever the wording or the schema changes: it enters the LLM cache key and the
question_candidates asset's code_version, so old answers are not reused for a new prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from rag_assets.generation.offline import offline_questions
from rag_assets.llm.templates import PromptTemplate

VERSION = "1"

SYSTEM = (
    "You write evaluation questions for a retrieval-augmented generation (RAG) system over a "
    "documentation corpus. Every question must be self-contained (name the product version when "
    "the chunk has one), and every reference answer must be supported word for word by the chunks "
    "given, except for adversarial questions, whose reference answer states that the documentation "
    "does not say. Never use knowledge from outside the chunks."
)

TYPE_INSTRUCTIONS: dict[str, str] = {
    "factual": "Ask for one specific fact (a number, limit, default, name or step) stated in the chunk.",
    "multi_hop": "Ask a question that can only be answered by combining facts from BOTH chunks; the answer uses both.",
    "abstractive": "Ask for a short summary or explanation of what the chunk describes; the answer paraphrases its main points.",
    "comparative": "Ask how the two chunks differ or compare (for example between product versions); the answer states both sides.",
    "adversarial": (
        "Ask a plausible question on the chunk's topic that the documentation does NOT answer "
        "(use the suggested absent topic if given). Its reference answer says the documentation does "
        "not cover it, and relevant_chunk_ids is empty."
    ),
    "terminology": (
        "Ask for a fact stated in the chunk, but phrase the question with other words than the chunk "
        "uses (synonyms, a user's everyday wording), so that keyword matching alone would miss it."
    ),
}


class GeneratedQuestion(BaseModel):
    question: str = Field(min_length=8, description="The question, self-contained.")
    answer: str = Field(min_length=1, description="The reference answer, supported by the chunks.")
    relevant_chunk_ids: list[str] = Field(description="Ids of the chunks that answer it; empty for adversarial.")


class GeneratedQuestions(BaseModel):
    questions: list[GeneratedQuestion] = Field(description="May be empty when the chunks support no good question.")


def _render(inputs: Mapping[str, Any]) -> str:
    chunks = "\n\n".join(
        f"[{c['chunk_id']}] document: {c['title']} ({c['path']}), version: {c['version'] or 'unversioned'}, "
        f"section: {c['heading'] or '-'}\n{c['text']}"
        for c in inputs["chunks"]
    )
    extra = f"\nSuggested absent topic: {inputs['absent_topic']}" if inputs.get("absent_topic") else ""
    return (
        f"Question type: {inputs['question_type']}\n{TYPE_INSTRUCTIONS[inputs['question_type']]}{extra}\n"
        f"Write {inputs['count']} question(s).\n\nChunks:\n\n{chunks}"
    )


GENERATE_QUESTIONS = PromptTemplate(
    id="generate_questions",
    version=VERSION,
    system=SYSTEM,
    user=_render,
    output_model=GeneratedQuestions,
    offline=offline_questions,
    tool_description="Record the generated evaluation questions with reference answers and relevant chunk ids.",
    max_tokens=1500,
)
