"""Judge one answer from Python, through the very code path the evaluation asset runs.

``judge(question, answer, contexts)`` builds the one-item golden set and RAG response the asset
would see, extracts the reference's statements as the golden asset does, and calls
:func:`rag_assets.scoring.evaluate.evaluate`: the numbers are the asset's per-item values for the
same item, with the same judge templates and the same formulas. Without a reference, context
precision is the reference-free form production scoring uses (was each chunk useful for the answer
given?) and context recall is not computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.golden.models import GoldenItem
from rag_assets.scoring.statements import NO_STATEMENTS, extract_statements
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.factory import make_llm_client
from rag_assets.rag.models import RagResponse, RetrievedChunk
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.evaluate import ItemScores, evaluate
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.settings import API_KEY_ENV, environment

CORPUS = "judged"  # the corpus version the judged cases, as golden items, name
#: a question type that is neither adversarial (no decline scoring) nor any generated type
QUESTION_TYPE = "single"


def default_judge() -> LLMClient:
    """Claude when ANTHROPIC_API_KEY is set, the offline heuristics otherwise (as the asset defaults)."""
    return make_llm_client("auto", api_key=environment().get(API_KEY_ENV) or None)


@dataclass(frozen=True)
class Case:
    """One answer to judge: its question, the contexts it was given, and optionally a reference answer."""

    question: str
    answer: str
    contexts: Sequence[str | Mapping[str, Any]]
    reference: str | None = None


def as_chunks(contexts: Sequence[str | Mapping[str, Any]]) -> tuple[list[RetrievedChunk], dict[str, str | None]]:
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


def _groups(retrieved: Sequence[dict[str, str | None]]) -> list[list[int]]:
    """Cases in groups whose chunk ids never name two versions (one evaluation run takes one id -> version
    map), in order; with rank ids and no versions, one group."""
    groups: list[tuple[list[int], dict[str, str | None]]] = []
    for index, versions in enumerate(retrieved):
        group = next((g for g in groups if all(g[1].get(c, v) == v for c, v in versions.items())), None)
        if group is None:
            group = ([], {})
            groups.append(group)
        group[0].append(index)
        group[1].update(versions)
    return [members for members, _ in groups]


def judge_cases(cases: Sequence[Case], llm: LLMClient | None = None, *, embedder: str = "hashing",
                cache: LLMCache | None = None) -> list[dict[str, Any]]:
    """:func:`judge` for many answers, their judge calls sent together (concurrently, or as one batch)."""
    client, scorer = llm or default_judge(), make_embedder(embedder)
    prepared = [as_chunks(case.contexts) for case in cases]
    items = [GoldenItem(f"case-{n}", 1, QUESTION_TYPE, case.question,
                        case.answer if case.reference is None else case.reference, (), CORPUS)
             for n, case in enumerate(cases)]
    with_reference = [item for item, case in zip(items, cases) if case.reference is not None]
    found = extract_statements(with_reference, client, cache)[0] if with_reference else {}
    statements = {item.item_id: found.get((item.item_id, 1), ()) for item in items}
    scored: dict[int, Any] = {}
    for group in _groups([versions for _, versions in prepared]):
        responses = {items[n].item_id: RagResponse(items[n].item_id, cases[n].answer, tuple(prepared[n][0]))
                     for n in group}
        versions = {c: v for n in group for c, v in prepared[n][1].items()}
        outcome = evaluate([items[n] for n in group], responses, versions, statements, client, cache, scorer,
                           k=max([1, *(len(prepared[n][0]) for n in group)]))
        scored.update(zip(group, outcome.items))
    label = f"{client.provider}:{client.model}"
    return [_result(scored[n], case.reference is not None, bool(statements[items[n].item_id]), label)
            for n, case in enumerate(cases)]


def _result(scores: ItemScores, has_reference: bool, has_statements: bool, label: str) -> dict[str, Any]:
    reviewed = tuple(m.name for m in REGISTRY.reviewed())
    metrics = reviewed if has_reference else tuple(m for m in reviewed if m != "context_recall")
    failures = {m: why for m, why in scores.failures.items() if m in metrics}
    if has_reference and not has_statements:
        failures["context_recall"] = NO_STATEMENTS
    result: dict[str, Any] = {m: scores.values.get(m) for m in metrics}
    for metric in metrics:
        if result[metric] is None and metric not in failures:
            failures[metric] = "not defined for this input"
    return {**result, "failures": failures, "judge": label}


def judge(question: str, answer: str, contexts: Sequence[str | Mapping[str, Any]], reference: str | None = None,
          llm: LLMClient | None = None, *, embedder: str = "hashing", cache: LLMCache | None = None) -> dict[str, Any]:
    """Scores of one answer: ``faithfulness``, ``answer_relevance``, ``context_precision`` and, with a
    reference, ``context_recall``; each a float, or None with the reason under ``failures``.

    ``llm``: the judge (default: :func:`default_judge`); ``embedder``: as the evaluation config's;
    ``cache``: an LLM cache, so that judging the same thing twice asks the model once.
    """
    return judge_cases([Case(question, answer, contexts, reference)], llm, embedder=embedder, cache=cache)[0]
