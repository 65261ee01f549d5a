"""Faithfulness: a verdict per statement of the answer, by its support in the retrieved chunks.

The answer's statements (``text.statements``; declines and hedges dropped: they claim nothing) are the
claims. In this order:

- a number of the claim in no chunk: inconsistency when a sentence that supports the rest of the claim
  (see ``support.SUPPORTED``) gives a number of its own (a changed value), fabrication otherwise, unless the
  question gives that number;
- fabrication: a proper name of the claim is in no chunk and not in the question (a name is held where any
  word of it is: "Ray Kurzweil" where the chunks write "Kurzweil");
- out_of_context, at most: a name or number the claim takes from the question but no chunk holds. The answer
  did not invent it, and the chunks do not say it: "Does it sync to Dropbox?" "Yes, it syncs to Dropbox." is
  not grounded in a chunk that names Google Drive;
- inconsistency: a sentence supports the claim but gives a number the claim does not state (in digits or
  words), and not all of the claim's;
- grounded: a sentence supports it; the supporting chunks are those of every sentence that does;
- out_of_context: otherwise.

Each claim also carries its graded ``support`` (see ``metrics.faithfulness.formula``): 0 when fabricated or
inconsistent, else the best sentence's support, above one half when grounded and at most one half out of
context. A grounded claim holding a word that no supporting sentence holds thus counts less than one the
chunks state in full: flattening every grounded claim to 1 made a one-word swap tie with the original.

Negation is not read: a claim that negates its supporting sentence is grounded. A rule that flipped a claim
whose clause differed in negation from the matching clause of its best sentence fired as often on claims
people judged supported as on unsupported ones (QAGS CNN/DM 17 and 15, LFQA-Verification 24 and 5) and
lowered every held-out figure it touched ("not only ... but also", "no other ... is as famous", dashes as
clause breaks); contradictions are a model judge's job (see docs/judge.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.offline_judge.support import SUPPORTED, Evidence
from rag_assets.scoring.offline_judge.text import (
    claimed_numbers, is_decline, name_runs, numbers, numbers_stated, statements, stems, without_numbers,
)


def verdict(claim: str, evidence: Evidence, question: str = "") -> tuple[str, list[str], float]:
    """The claim's verdict, the ids of the chunks that support it when grounded, and its graded support."""
    claimed, stated = claimed_numbers(claim, evidence.numbers), numbers_stated(claim)
    unheld_numbers = claimed - evidence.numbers
    if unheld_numbers:
        score, best = evidence.best(without_numbers(claim))
        if score > SUPPORTED and any(s.numbers for s in best):
            return "inconsistency", [], 0.0
        if not unheld_numbers <= numbers(question):
            return "fabrication", [], 0.0
    unheld_names = {w for run in name_runs(claim) if not run & evidence.stems for w in run}
    if not unheld_names <= set(stems(question)):
        return "fabrication", [], 0.0
    score, best = evidence.best(claim)
    if score <= SUPPORTED or unheld_numbers or unheld_names:
        return "out_of_context", [], round(min(score, SUPPORTED), 6)
    if claimed and not any(claimed <= s.numbers for s in best) and any(s.numbers - stated for s in best):
        return "inconsistency", [], 0.0
    wanted = stems(claim)
    supporting = {s.chunk_id for s in evidence.sentences if evidence.coverage(wanted, s.stems) > SUPPORTED}
    return "grounded", [c for c in dict.fromkeys(evidence.chunk_ids) if c in supporting], round(score, 6)


def faithfulness(inputs: Mapping[str, Any]) -> dict[str, Any]:
    evidence, question = Evidence(inputs.get("chunks") or []), str(inputs.get("question") or "")
    claims = []
    for claim in statements(str(inputs.get("answer") or "")):
        if is_decline(claim, question):
            continue
        label, supporting, support = verdict(claim, evidence, question)
        claims.append({"claim": claim, "verdict": label, "supporting_chunk_ids": supporting, "support": support})
    return {"claims": claims}
