"""The reference RAG system's answer prompt (versioned; enters the cache key and code_version)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate
from rag_assets.rag.offline import offline_answer

SYSTEM = (
    "You answer questions about a product's documentation using ONLY the numbered context chunks given. "
    "Cite the chunk id in square brackets after every sentence that uses it, like [3f9a0c1d2e4b5a6c]. "
    "If the chunks do not contain the answer, say that you cannot answer from the documentation and set "
    "declined to true; never use outside knowledge. When chunks from several product versions disagree, "
    "answer for the version the question asks about, else for the newest."
)


class CitedClaim(BaseModel):
    claim: str = Field(description="A sentence of the answer.")
    chunk_id: str = Field(description="The id of the chunk that supports it.")


class RagAnswer(BaseModel):
    answer: str = Field(description="The answer, with [chunk_id] citations.")
    citations: list[CitedClaim] = Field(default_factory=list)
    declined: bool = Field(description="True when the context does not answer the question.")


def _render(inputs: Mapping[str, Any]) -> str:
    context = "\n\n".join(f"[{c['chunk_id']}] (version {c.get('version') or 'unversioned'})\n{c['text']}"
                          for c in inputs["chunks"])
    return f"Context chunks:\n\n{context}\n\nQuestion: {inputs['question']}"


RAG_ANSWER = PromptTemplate(
    id="rag_answer",
    version="1",
    system=SYSTEM,
    user=_render,
    output_model=RagAnswer,
    offline=offline_answer,
    tool_description="Record the answer to the question, its citations, and whether it was declined.",
    max_tokens=1024,
)
