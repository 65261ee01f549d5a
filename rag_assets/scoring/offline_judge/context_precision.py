"""Context precision: a graded usefulness per retrieved chunk, so that chunks of different quality differ.

A chunk's grade (0..1) is the mean of two readings, or the first alone when there is no reference:

- relevance to the question: how much of the question the chunk covers and how much of the chunk bears on
  it, as the geometric mean of two IDF-weighted shares of the stems the question asks about (``text.asked``;
  weights from the sentences of all the retrieved chunks, see ``support``): the share the chunk holds
  (coverage), and the mean over the chunk's sentences of the share each holds (focus). Over coverage alone a
  chunk padded with sentences that do not bear on the question lost nothing: a SQuAD paragraph scored no
  higher than itself followed by another paragraph in 65 of 96 pairs (see docs/judge.md). Focus depends on
  how the chunk is cut (each heading, list item and table row is a sentence), so compare grades between
  systems that chunk alike;
- support of the reference: the mean, over the reference's statements, of the support the chunk's best
  sentence gives each.

The verdict ``useful`` is the yes/no a model judge gives: does the chunk hold what is asked? Its best
sentence's share of the question is above one half (with a reference: the mean of that share and the support
of the reference is). A useful chunk among much else thus grades low, and a chunk whose words are spread over
several sentences can grade above one half without being useful. The grade goes out beside it
(``ChunkVerdict.score``) and the metric reads the grade (see ``rag_assets.scoring.metrics.context_precision.formula``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.offline_judge.context_recall import reference_statements
from rag_assets.scoring.offline_judge.support import Evidence
from rag_assets.scoring.offline_judge.text import asked, stems

USEFUL = 0.5


def chunk_reading(chunk_id: str, question: list[str], reference: list[str], evidence: Evidence) -> tuple[float, bool]:
    """The chunk's grade and whether it is useful."""
    own = [s for s in evidence.sentences if s.chunk_id == chunk_id]
    if not own:
        return 0.0, False
    each = [evidence.coverage(question, s.stems) for s in own]
    coverage = evidence.coverage(question, frozenset(w for s in own for w in s.stems))
    relevance = math.sqrt(coverage * sum(each) / len(each))
    if not reference:
        return relevance, max(each) > USEFUL
    support = sum(evidence.best(r, chunk_id)[0] for r in reference) / len(reference)
    return (relevance + support) / 2, (max(each) + support) / 2 > USEFUL


def context_precision(inputs: Mapping[str, Any]) -> dict[str, Any]:
    evidence = Evidence(inputs.get("chunks") or [])
    question = asked(str(inputs.get("question") or ""))
    reference = [s for s in reference_statements(inputs)["statements"] if stems(s)]
    verdicts = []
    for chunk_id in evidence.chunk_ids:
        grade, useful = chunk_reading(chunk_id, question, reference, evidence)
        verdicts.append({"chunk_id": chunk_id, "useful": useful, "score": round(grade, 6)})
    return {"verdicts": verdicts}
