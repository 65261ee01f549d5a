"""Context recall: the reference answer's statements, and the chunk each is attributed to.

Statements: sentences, split at semicolons and at ", and" between two full statements. A statement is
attributed to the chunk holding most of its words and all its quantities and identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.offline_judge.chunks import _chunks
from rag_assets.scoring.offline_judge.claims import _claim, _is_hedge
from rag_assets.scoring.offline_judge.support import _chunk_compatible, _support, MIN_COVERAGE
from rag_assets.scoring.offline_judge.text import _normalise, _split_sentences, _strip_citations, _words


def _statement_split(sentence: str) -> list[str]:
    """Split on ', and' / ' and ' / ', while' when both halves are full statements with a verb."""
    parts = re.split(r",? and (?=(?:the |a |an |its |their |it |they |this |each |every |all |[A-Z]))"
                     r"|, while |, whereas ", sentence)
    if len(parts) == 1:
        return [sentence]
    verbs = re.compile(r"\b(?:is|are|was|were|can|cannot|will|has|have|had|does|do|must|may|keeps?|uses?|supports?|"
                       r"allows?|needs?|requires?|runs?|takes?|gets?|becomes?|stays?|\w+s|\w+ed)\b")
    if all(len(_words(_normalise(p))) >= 3 and verbs.search(p) for p in parts):
        return [p.strip().rstrip(".") + "." for p in parts]
    return [sentence]


def reference_statements(inputs: Mapping[str, Any]) -> dict[str, Any]:
    reference = _strip_citations(str(inputs.get("reference") or ""))
    statements: list[str] = []
    for sentence in _split_sentences(reference):
        if _is_hedge(sentence):
            continue
        for part in _statement_split(sentence):
            part = part.strip()
            if part and part not in statements:
                statements.append(part)
    if not statements and reference.strip():
        statements = [reference.strip()]
    return {"statements": statements}


def context_recall(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A statement is attributed to the chunk that holds most of its words and all its quantities."""
    chunks = _chunks(inputs)
    out = []
    for sentence in inputs.get("statements") or []:
        statement = _claim(str(sentence))
        best_id, best = None, 0.0
        for chunk in chunks:
            if not _chunk_compatible(chunk, statement.versions):
                continue
            support = _support(statement, chunk, statement.versions)
            if not (support.quantities_ok and support.specifics_ok):
                continue
            if support.coverage > best:
                best_id, best = chunk.chunk_id, support.coverage
        attributed = best_id is not None and best >= MIN_COVERAGE
        out.append({"statement": str(sentence), "attributed": attributed, "chunk_id": best_id if attributed else None})
    return {"statements": out}
