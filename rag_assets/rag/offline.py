"""The offline answer generator of the reference RAG system: extractive and cited.

It scores every sentence of the retrieved chunks by how many of the question's content words it
contains (each weighted by rarity among the retrieved chunks), answers with the best-supported
sentence (and a second one that covers question words the first missed), cites each sentence's
chunk, and declines when no sentence covers enough of the question.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from rag_assets.text.tokens import content_words, sentences

DECLINE = "I cannot answer this from the documentation."
# Words of a question's framing rather than its topic (the offline question generator's templates use them:
# "What does the 'Limits' section explain?", "What happens if ...?"), compared after ``_norm``.
GENERIC = frozenset({"version", "documentation", "say", "says", "said", "according", "explain", "explains",
                     "summarize", "describe", "together", "documents", "many", "much", "differ", "compare",
                     "section", "page", "happen"})
MIN_SUPPORT = 0.4
_VERSION = re.compile(r"\b\d+\.\d+\b")


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def _words(text: str) -> set[str]:
    return {_norm(w) for w in content_words(text)} - GENERIC


def offline_answer(inputs: Mapping[str, Any]) -> dict[str, Any]:
    question = inputs["question"]
    wanted = _words(question)
    chunks = inputs["chunks"]
    asked_versions = set(_VERSION.findall(question))
    if not wanted or not chunks:
        return {"answer": DECLINE, "citations": [], "declined": True}
    df = {w: sum(1 for c in chunks if w in _words(c["text"])) for w in wanted}
    weight = {w: math.log(1 + len(chunks) / (1 + df[w])) + 0.1 for w in wanted}
    total = math.fsum(weight.values())  # fsum: exactly rounded, so the sum of a set is the same in every process
    scored = []
    for rank, chunk in enumerate(chunks):
        version_bonus = 0.05 if asked_versions and chunk.get("version") in asked_versions else 0.0
        for sentence in sentences(chunk["text"]):
            covered = wanted & _words(sentence)
            support = math.fsum(weight[w] for w in covered) / total
            scored.append((support + version_bonus - rank * 0.001, support, sentence, chunk["chunk_id"], covered))
    scored.sort(key=lambda s: -s[0])
    if not scored or scored[0][1] < MIN_SUPPORT:
        return {"answer": DECLINE, "citations": [], "declined": True}
    picked = [scored[0]]
    for candidate in scored[1:]:
        if candidate[4] - picked[0][4] and candidate[1] >= MIN_SUPPORT and candidate[2] != picked[0][2]:
            picked.append(candidate)
            break
    answer = " ".join(f"{s[2]} [{s[3]}]" for s in picked)
    return {"answer": answer, "citations": [{"claim": s[2], "chunk_id": s[3]} for s in picked], "declined": False}
