"""From judge outputs to scores: one pure function per metric, each documented with its convention.

A judge failure never reaches these functions: the caller records it and the metric stays unset.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rag_assets.rag.models import Citation
from rag_assets.scoring.embedding import Embedder, cosine
from rag_assets.text.tokens import content_words, jaccard

NAN = float("nan")
VERDICTS = ("grounded", "out_of_context", "inconsistency", "fabrication")


def faithfulness(judgment: Mapping[str, Any]) -> tuple[float, dict[str, int]]:
    """Grounded claims / all claims. An answer with no claim (a decline) claims nothing unsupported: 1.0.
    A claim may carry a graded ``support`` in [0, 1] (the offline judge's): it then counts that instead of
    1 or 0, so two answers whose unsupported claims are unsupported to different degrees do not tie."""
    counts = Counter(c["verdict"] for c in judgment["claims"])
    total = sum(counts.values())
    credit = sum(float(c["verdict"] == "grounded") if c.get("support") is None else c["support"]
                 for c in judgment["claims"])
    return (1.0 if total == 0 else credit / total), {v: counts.get(v, 0) for v in VERDICTS}


def answer_relevance(question: str, judgment: Mapping[str, Any], embedder: Embedder) -> float:
    """Completeness (mean of how fully each part of the question is answered) times focus (share of the
    answer's statements that address the question); 0 for a noncommittal answer. With a semantic embedder
    (never the hashing one, which rewards restating the question) the mean of that and the ragas score:
    the mean cosine similarity of the question to the three questions the answer answers."""
    if judgment["noncommittal"]:
        return 0.0
    parts, statements = judgment["question_parts"], judgment["statements"]
    completeness = sum(p["answered"] for p in parts) / len(parts)
    focus = sum(1 for s in statements if s["addresses_question"]) / len(statements) if statements else 0.0
    score = completeness * focus
    if getattr(embedder, "semantic", False):
        ragas = float(np.clip(np.mean(cosine(embedder, question, judgment["questions"])), 0.0, 1.0))
        score = (score + ragas) / 2
    return float(score)


def context_precision(useful: Sequence[float]) -> float:
    """Rank-aware: sum over ranks k of precision@k for each useful chunk, over the useful count
    (average precision of the usefulness verdicts); 0 when no chunk is useful or none was retrieved.
    A verdict may be graded (a usefulness in [0, 1], True and False counting 1 and 0): each rank then
    weighs its grade and precision@k is the mean grade of the first k chunks, so one chunk alone scores
    its grade and two chunks of different quality do not tie."""
    grades = np.asarray(useful, dtype=float)
    if not grades.sum() > 0:
        return 0.0
    return float(np.sum(grades * np.cumsum(grades) / np.arange(1, grades.size + 1)) / grades.sum())


def context_recall(attributed: Sequence[bool]) -> float:
    """Attributed reference statements / all statements (NaN without statements)."""
    return NAN if not attributed else sum(attributed) / len(attributed)


def _best_claim(text: str, claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    words = content_words(re.sub(r"\[[0-9a-f]{8,}\]", " ", text))
    scored = [(jaccard(words, content_words(c["claim"])), i) for i, c in enumerate(claims)]
    best = max(scored, default=(0.0, -1))
    return claims[best[1]] if best[0] > 0 else None


def citation_accuracy(citations: Sequence[Citation], retrieved_ids: set[str],
                      judgment: Mapping[str, Any]) -> tuple[float, int]:
    """Share of citations whose chunk supports the cited claim, by the faithfulness judgment.

    A citation of a chunk that was not retrieved counts as fabricated (wrong). Returns
    (accuracy, fabricated citations); NaN accuracy when the answer cites nothing.
    """
    if not citations:
        return NAN, 0
    correct = fabricated = 0
    for citation in citations:
        if citation.chunk_id not in retrieved_ids:
            fabricated += 1
            continue
        claim = _best_claim(citation.claim, judgment["claims"])
        correct += int(claim is not None and citation.chunk_id in claim.get("supporting_chunk_ids", []))
    return correct / len(citations), fabricated


def _version_key(version: str | None) -> tuple:
    parts = re.findall(r"\d+", version or "")
    return tuple(int(p) for p in parts) if parts else (-1,)


def temporal_faithfulness(question: str, retrieved_versions: Mapping[str, str | None],
                          judgment: Mapping[str, Any]) -> float:
    """When the retrieved chunks come from several document versions: 1 if every chunk the answer
    relies on (supporting chunks of grounded claims) is of the newest version retrieved, or of the
    version the question names; 0 otherwise. NaN when only one version was retrieved or the answer
    relies on no chunk."""
    versions = {v for v in retrieved_versions.values() if v}
    if len(versions) < 2:
        return NAN
    named = {v for v in versions if re.search(rf"(?<![\d.]){re.escape(v)}(?![\d.])", question)}
    wanted = named or {max(versions, key=_version_key)}
    used = {retrieved_versions.get(chunk_id) for claim in judgment["claims"] if claim["verdict"] == "grounded"
            for chunk_id in claim.get("supporting_chunk_ids", []) if chunk_id in retrieved_versions}
    used.discard(None)
    if not used:
        return NAN
    return 1.0 if used <= wanted else 0.0
