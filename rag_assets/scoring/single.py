"""Judge one answer from Python, through the very code path the evaluation asset runs.

``judge(question, answer, contexts)`` builds the one-item golden set and RAG response the asset
would see, extracts the reference's statements as the golden asset does, and calls
:func:`rag_assets.scoring.evaluate.evaluate`: the numbers are the asset's per-item values for the
same item, with the same judge templates and the same formulas. Without a reference, context
precision is the reference-free form production scoring uses (was each chunk useful for the answer
given?) and context recall is not computed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.golden.models import GoldenItem
from rag_assets.golden.statements import extract_statements
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.factory import make_llm_client
from rag_assets.rag.models import RagResponse, RetrievedChunk
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.evaluate import CORE_METRICS, evaluate

API_KEY_ENV = "ANTHROPIC_API_KEY"
ITEM_ID = "judged"
#: a question type that is neither adversarial (no decline scoring) nor any generated type
QUESTION_TYPE = "single"
NO_STATEMENTS = "no statements could be extracted from the reference (the extraction call failed or found none)"


def default_judge() -> LLMClient:
    """Claude when ANTHROPIC_API_KEY is set, the offline heuristics otherwise (as the asset defaults)."""
    return make_llm_client("auto", api_key=os.environ.get(API_KEY_ENV) or None)


def _retrieved(contexts: Sequence[str | Mapping[str, Any]]) -> tuple[list[RetrievedChunk], dict[str, str | None]]:
    """Contexts as ranked chunks: a string gets its rank as id ("1", "2"...: an answer's "[1]" cites it);
    a mapping gives ``text`` and optionally ``chunk_id`` and ``version``."""
    chunks, versions = [], {}
    for rank, context in enumerate(contexts, start=1):
        if isinstance(context, str):
            context = {"text": context}
        if not isinstance(context, Mapping) or not isinstance(context.get("text"), str):
            raise ConfigError(f"context {rank}: expected a string or a mapping with a 'text' string, got {context!r}")
        chunk_id = str(context.get("chunk_id") or rank)
        if chunk_id in versions:
            raise ConfigError(f"context {rank}: chunk id {chunk_id!r} is given twice")
        chunks.append(RetrievedChunk(chunk_id, context["text"], 0.0, rank))
        versions[chunk_id] = str(context["version"]) if context.get("version") else None
    return chunks, versions


def judge(question: str, answer: str, contexts: Sequence[str | Mapping[str, Any]], reference: str | None = None,
          llm: LLMClient | None = None, *, embedder: str = "hashing", cache: LLMCache | None = None) -> dict[str, Any]:
    """Scores of one answer: ``faithfulness``, ``answer_relevance``, ``context_precision`` and, with a
    reference, ``context_recall``; each a float, or None with the reason under ``failures``.

    ``llm``: the judge (default: :func:`default_judge`); ``embedder``: as the evaluation config's;
    ``cache``: an LLM cache, so that judging the same thing twice asks the model once.
    """
    client = llm or default_judge()
    chunks, versions = _retrieved(contexts)
    item = GoldenItem(ITEM_ID, 1, QUESTION_TYPE, question, answer if reference is None else reference, (), ITEM_ID)
    statements: Sequence[str] = ()
    if reference is not None:
        statements = extract_statements([item], client, cache)[0].get((ITEM_ID, 1), ())
    response = RagResponse(ITEM_ID, answer, tuple(chunks))
    outcome = evaluate([item], {ITEM_ID: response}, versions, {ITEM_ID: statements}, client, cache,
                       make_embedder(embedder), k=max(1, len(chunks)))
    [scores] = outcome.items
    metrics = CORE_METRICS if reference is not None else tuple(m for m in CORE_METRICS if m != "context_recall")
    failures = {m: why for m, why in scores.failures.items() if m in metrics}
    if reference is not None and not statements:
        failures["context_recall"] = NO_STATEMENTS
    result: dict[str, Any] = {m: scores.values.get(m) for m in metrics}
    for metric in metrics:
        if result[metric] is None and metric not in failures:
            failures[metric] = "not defined for this input"
    return {**result, "failures": failures, "judge": f"{client.provider}:{client.model}"}
