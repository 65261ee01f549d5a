"""Context precision: a graded usefulness per retrieved chunk, so that chunks of different quality differ.

A chunk's score (0..1) is the mean of two readings, or the first alone when there is no reference:

- relevance to the question: the IDF-weighted share of the stems the question asks about (``text.asked``)
  that the chunk holds (weights from the sentences of all the retrieved chunks, see ``support``);
- support of the reference: the mean, over the reference's statements, of the support the chunk's best
  sentence gives each.

The verdict ``useful`` is the score above one half; the score goes out beside it (``ChunkVerdict.score``)
and the metric reads it (see ``rag_assets.scoring.metrics.context_precision.formula``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.offline_judge.context_recall import reference_statements
from rag_assets.scoring.offline_judge.support import Evidence
from rag_assets.scoring.offline_judge.text import asked, stems

USEFUL = 0.5


def chunk_score(chunk_id: str, question: list[str], reference: list[str], evidence: Evidence) -> float:
    held = frozenset(w for s in evidence.sentences if s.chunk_id == chunk_id for w in s.stems)
    relevance = evidence.coverage(question, held)
    if not reference:
        return relevance
    support = sum(evidence.best(r, chunk_id)[0] for r in reference) / len(reference)
    return (relevance + support) / 2


def context_precision(inputs: Mapping[str, Any]) -> dict[str, Any]:
    evidence = Evidence(inputs.get("chunks") or [])
    question = asked(str(inputs.get("question") or ""))
    reference = [s for s in reference_statements(inputs)["statements"] if stems(s)]
    verdicts = []
    for chunk_id in evidence.chunk_ids:
        score = round(chunk_score(chunk_id, question, reference, evidence), 6)
        verdicts.append({"chunk_id": chunk_id, "useful": score > USEFUL, "score": score})
    return {"verdicts": verdicts}
