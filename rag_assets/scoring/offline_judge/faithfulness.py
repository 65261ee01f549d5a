"""Faithfulness: a verdict per claim of the answer.

The answer's sentences (citation markers stripped; declines, hedges and pleasantries dropped) are the claims.
A claim is grounded when a chunk supports it (see support); a claim that mixes facts of several chunks is
grounded when each of its clauses is. Otherwise: inconsistency (a unit about the same subject gives another
value, the value is another version's, or the chunks say the opposite), fabrication (a number, identifier or
name found in no chunk), or out_of_context (unsupported).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_assets.scoring.offline_judge.chunks import _chunks, Chunk
from rag_assets.scoring.offline_judge.claims import _claim, _claim_sentences, Claim
from rag_assets.scoring.offline_judge.support import (
    _chunk_compatible, _contradicting_value, _coverage, _grounding, _polarity_conflict, _support, _temporal_conflict,
    _wanted_versions, _with_context, MIN_COVERAGE,
)


def _verdict(claim: Claim, chunks: Sequence[Chunk], question: str) -> tuple[str, list[str]]:
    """The claim's verdict and, when it is grounded, the chunks that support it."""
    claim = _with_context(claim, question)
    supporting = _grounding(claim, chunks, question)
    if supporting:
        return "grounded", supporting
    wanted = _wanted_versions(claim, question)
    usable = [c for c in chunks if _chunk_compatible(c, wanted)]
    if not all(any(q.matches(x) for c in chunks for x in c.quantities) for q in claim.quantities):
        return ("inconsistency" if _contradicting_value(claim, chunks) else "fabrication"), []
    if not all(any(s in c.text_low for c in chunks) for s in claim.specifics):
        return "fabrication", []
    if _polarity_conflict(claim, usable) or _temporal_conflict(claim, chunks, wanted, question):
        return "inconsistency", []
    covered = any(_coverage(claim.words, c) >= MIN_COVERAGE for c in chunks)
    if claim.quantities and covered:
        return "inconsistency", []  # the values exist, but not for this subject or not in this version
    if not all(any(n in c.words for c in chunks) for n in claim.named):
        return "fabrication", []
    if claim.named and any(s.coverage >= MIN_COVERAGE and not s.named_ok
                           for s in (_support(claim, c, wanted) for c in usable)):
        return "inconsistency", []  # the chunk says it of another name (Windows and macOS, not Linux)
    return "out_of_context", []


def faithfulness(inputs: Mapping[str, Any]) -> dict[str, Any]:
    chunks = _chunks(inputs)
    question = str(inputs.get("question") or "")
    claims = []
    for sentence in _claim_sentences(str(inputs.get("answer") or ""), [c.chunk_id for c in chunks]):
        verdict, supporting = _verdict(_claim(sentence), chunks, question)
        claims.append({"claim": sentence, "verdict": verdict, "supporting_chunk_ids": supporting})
    return {"claims": claims}
