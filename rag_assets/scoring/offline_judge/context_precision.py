"""Context precision: which retrieved chunks help to arrive at the reference answer.

A chunk is useful when it supports a statement of the reference answer (its words, its quantities for the same
role and its identifiers; the question's words count a fifth) nearly as well as the best chunk does, and
neither contradicts its values nor says the opposite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from rag_assets.scoring.offline_judge.chunks import _chunks, Chunk
from rag_assets.scoring.offline_judge.claims import _claim, Claim
from rag_assets.scoring.offline_judge.context_recall import reference_statements
from rag_assets.scoring.offline_judge.support import (
    _chunk_compatible, _contradicting_value, _coverage, _polarity_conflict, _quantity_support, _wanted_versions,
    _with_context, MIN_USEFUL_COVERAGE,
)
from rag_assets.scoring.offline_judge.text import _normalise, _unique, _words


def _statement_score(statement: Claim, chunk: Chunk, wanted: Sequence[str], context: Sequence[str]) -> float:
    """How much of a reference statement a chunk supports: its words (1 each), its quantities stated for
    the same subject and its identifiers (2 each), read with the question's words (a fifth of the score).
    0 when the chunk says the opposite or gives a different value of the same kind for the subject."""
    if _polarity_conflict(statement, [chunk]):
        return 0.0
    total = float(len(statement.words))
    matched = sum(1.0 for w in statement.words if w in chunk.words)
    for index, quantity in enumerate(statement.quantities):
        total += 2
        if _quantity_support(index, statement, chunk, wanted):
            matched += 2
        elif _contradicting_value(replace(statement, quantities=(quantity,), subjects=(statement.subjects[index],)),
                                  [chunk]):
            return 0.0
    for specific in statement.specifics:
        total += 2
        matched += 2 if specific in chunk.text_low else 0
    score = matched / total if total else 0.0
    if context:
        score = 0.8 * score + 0.2 * _coverage(context, chunk)
    return score


def context_precision(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk is useful when it supports a statement of the reference answer, nearly as well as the best
    chunk supports that statement."""
    chunks = _chunks(inputs)
    question = str(inputs.get("question") or "")
    context = list(_unique(_words(_normalise(question))))
    statements = reference_statements({"reference": inputs.get("reference") or ""})["statements"]
    useful = [False] * len(chunks)
    for sentence in statements:
        statement = _with_context(_claim(sentence), question)
        wanted = _wanted_versions(statement, question)
        scores = [(_statement_score(statement, c, wanted, context) if _chunk_compatible(c, wanted) else 0.0)
                  for c in chunks]
        best = max(scores, default=0.0)
        if best < MIN_USEFUL_COVERAGE:
            continue
        for index, score in enumerate(scores):
            if score >= MIN_USEFUL_COVERAGE and score >= 0.8 * best:
                useful[index] = True
    return {"verdicts": [{"chunk_id": c.chunk_id, "useful": flag} for c, flag in zip(chunks, useful)]}
