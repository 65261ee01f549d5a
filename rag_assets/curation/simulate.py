"""A simulated expert, for demos and end-to-end tests: deterministic decisions on a review queue.

It is not a judge of quality; it stands in for the human step so that the whole lifecycle can run
unattended on the sample corpus. Its rows say ``reviewer=simulated-expert``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rag_assets.corpus.models import sha256_hex

SIMULATED_REVIEWER = "simulated-expert"


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]


def simulate_review(rows: Sequence[Mapping[str, str]], reject_share: float = 0.1,
                    edit_share: float = 0.1) -> list[dict[str, str]]:
    """Decide every row: mostly accept, some reject, some edit (tightening the answer to its first
    sentence, or marking the question as reviewed). Which rows is fixed by a hash of the candidate id."""
    decided = []
    for row in rows:
        out = dict(row)
        draw = int(sha256_hex(row["candidate_id"])[:8], 16) / 0xFFFFFFFF
        if draw < reject_share:
            out.update(decision="reject", notes="not useful as an evaluation question")
        elif draw < reject_share + edit_share:
            shorter = _first_sentence(row["reference_answer"])
            if shorter != row["reference_answer"].strip():
                out.update(decision="edit", edited_answer=shorter, notes="answer tightened to its key sentence")
            else:
                out.update(decision="edit", edited_question=f"Per the documentation: {row['question']}",
                           notes="question scoped to the documentation")
        else:
            out.update(decision="accept")
        out["reviewer"] = SIMULATED_REVIEWER
        decided.append(out)
    return decided
