"""Context recall: the reference answer's statements, and the chunk each is attributed to.

A statement is attributed to the chunk of the sentence that supports it best, when that support passes
``support.SUPPORTED`` and the sentence holds every number of the statement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.offline_judge.support import SUPPORTED, Evidence
from rag_assets.scoring.offline_judge.text import is_decline, numbers, statements


def reference_statements(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's statements (declines dropped); the whole reference when none is left."""
    reference = str(inputs.get("reference") or "").strip()
    question = str(inputs.get("question") or "")
    found = list(dict.fromkeys(s for s in statements(reference) if not is_decline(s, question)))
    return {"statements": found or ([reference] if reference else [])}


def context_recall(inputs: Mapping[str, Any]) -> dict[str, Any]:
    evidence = Evidence(inputs.get("chunks") or [])
    out = []
    for statement in inputs.get("statements") or []:
        statement = str(statement)
        score, best = evidence.best(statement)
        holding = [s for s in best if numbers(statement) <= s.numbers] if score > SUPPORTED else []
        chunk_id = holding[0].chunk_id if holding else None
        out.append({"statement": statement, "attributed": chunk_id is not None, "chunk_id": chunk_id})
    return {"statements": out}
