"""What a pattern of metrics says is wrong, and what to try first (the design sources' table).

The patterns of several metrics are here; what one low metric alone says is its own (``Metric.when_low``).
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_assets.scoring.metrics import REGISTRY

LOW, HIGH = 0.6, 0.8


def diagnose(means: Mapping[str, float | None], hallucinations: Mapping[str, int] | None = None,
             k: int = 5) -> list[str]:
    m = {name: value for name, value in means.items() if value is not None}
    get = m.get
    notes: list[str] = []

    def low(name: str) -> bool:
        return name in m and m[name] < LOW

    def high(name: str) -> bool:
        return name in m and m[name] >= HIGH

    if low(f"hit_rate@{k}") or low(f"recall@{k}"):
        notes.append(f"Retrieval misses: the relevant chunk is often not in the top {k} "
                     f"(hit rate {get(f'hit_rate@{k}', 0):.2f}). Try better chunking, hybrid or dense retrieval, "
                     "query rewriting, or a larger k with a re-ranker.")
    if high("faithfulness") and low("context_recall"):
        notes.append("Answers are faithful but the context lacks what the reference needs: a retrieval problem, "
                     "not a generation one. Improve recall before touching the prompt.")
    if low("faithfulness") and (high("context_recall") or high("context_precision")):
        notes.append("The context holds the answer but the generator strays from it: tighten the prompt to answer "
                     "only from the context, lower sampling randomness, or use a stronger model.")
    if low("context_precision") and high("context_recall"):
        notes.append("The right chunks are retrieved among much noise: reduce k, add a re-ranker, or filter by metadata.")
    if low("answer_relevance") and high("faithfulness"):
        notes.append("Answers are grounded but miss the question (incomplete, padded or declined): make the prompt "
                     "answer the question asked, and check declines on answerable questions.")
    notes += [metric.when_low for metric in REGISTRY if metric.when_low and low(metric.key(k))]
    fabricated = (hallucinations or {}).get("fabrication", 0)
    if fabricated:
        notes.append(f"{fabricated} fabricated claim(s): the generator invents specifics (numbers, names, settings); "
                     "see the worst items.")
    if not notes:
        notes.append("No metric pattern points at a specific weakness.")
    return notes
