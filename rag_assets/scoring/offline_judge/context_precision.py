"""Context precision: a graded usefulness per retrieved chunk, so that chunks of different quality differ.

A chunk's score (0..1) is the mean of two readings, or the first alone when there is no reference:

- relevance to the question: the mean, over the chunk's sentences, of the IDF-weighted share of the stems
  the question asks about (``text.asked``) that the sentence holds (weights from the sentences of all the
  retrieved chunks, see ``support``). Read sentence by sentence, a chunk padded with sentences that do not
  bear on the question grades lower than the same chunk without them, as a precision should: the
  generator has to read past them. Over the chunk's pooled words the padding cost nothing: a SQuAD
  paragraph scored no higher than itself followed by another paragraph in 65 of 96 pairs (see docs/judge.md);
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
    own = [s for s in evidence.sentences if s.chunk_id == chunk_id]
    relevance = sum(evidence.coverage(question, s.stems) for s in own) / len(own) if own else 0.0
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
