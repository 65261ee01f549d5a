"""The judge's prompt templates: each judge metric's template lives in its module (rag_assets.scoring.metrics),
and the registry joins them into one suite; here are the suite's members by name and the extraction of a
reference answer's statements (done once per golden item, for context recall).

Per item, four calls for the core metrics, at most:

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

from pydantic import BaseModel, Field

from rag_assets.llm.templates import PromptTemplate
from rag_assets.scoring import offline_judge
from rag_assets.scoring.metrics import JUDGE_SUITE


class ReferenceStatements(BaseModel):
    statements: list[str] = Field(description="The atomic statements of the reference answer.")


REFERENCE_STATEMENTS = PromptTemplate(
    id="extract_reference_statements", version="1",
    system="You split a reference answer into atomic, self-contained statements without adding anything.",
    user=lambda i: f"Question: {i['question']}\n\nReference answer:\n{i['reference']}",
    output_model=ReferenceStatements, offline=offline_judge.reference_statements,
    tool_description="Record the atomic statements of the reference answer.", max_tokens=1024,
)


JUDGE_TEMPLATES = FAITHFULNESS, ANSWER_RELEVANCE, CONTEXT_PRECISION, CONTEXT_RECALL = JUDGE_SUITE
#: the judge templates' refs: the code version of the assets that judge, and part of a judge configuration
JUDGE_TEMPLATES_REF = "+".join(t.ref for t in JUDGE_TEMPLATES)
