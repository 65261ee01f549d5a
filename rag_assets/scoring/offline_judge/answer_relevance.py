"""Answer relevance: does the answer speak to what was asked, all of it, and give the kind of answer asked?

- The question's parts: its sentences, each split before "and" + a question word ("What is X and how is it
  set?"). A part is answered by the share of its asked stems (``text.asked``) that the answer's statements
  hold, halved when the part asks for a number or a time ("how many", "when", "what year") and the answer
  gives no digit and no month.
- The answer's statements address the question when they share a stem with it or with the statement just
  before that addressed it (a continued topic: "It also...").
- Noncommittal: every sentence declines or hedges, or the answer adds no stem the question lacks (it only
  restates the question).
- Three stand-in reverse questions (only a semantic embedder reads them, see ``metrics.answer_relevance.formula``):
  the answer's first statements, cycled to three.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag_assets.scoring.offline_judge.text import asked, is_decline, sentences, statements, stems

#: credit kept by a part whose words the answer covers without the kind of answer it asks for
UNMET_TYPE_CREDIT = 0.5
#: "and" before a question word, with its comma; matched from the start of a blank run only (linear on long blanks)
_PART = re.compile(r"(?<!\s)(?:\s*,\s*|\s+)and\s+"
                   r"(?=(?:what|how|when|where|why|which|who|whom|whose|whether|is|are|does|do|can)\b)", re.IGNORECASE)
_WANTS_VALUE = re.compile(r"\b(?:how\s+(?:many|much|long|often|old|far|big|large)|when|what\s+(?:year|date|time|"
                          r"percentage|number|age)|which\s+(?:year|date))\b", re.IGNORECASE)
_VALUE = re.compile(r"\d|\b(?:january|february|march|april|may|june|july|august|september|october|november|"
                    r"december|century|decade|daily|weekly|monthly|yearly|hourly|once|twice)\b", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    parts = [p.strip() for s in sentences(question) or [question] for p in _PART.split(s) if p.strip()]
    return parts or [question]


def _answered(part: str, held: set[str], informative: str) -> float:
    wanted = set(asked(part))
    share = len(wanted & held) / len(wanted) if wanted else (1.0 if held else 0.0)
    if _WANTS_VALUE.search(part) and not _VALUE.search(informative):
        share *= UNMET_TYPE_CREDIT
    return round(share, 6)


def answer_relevance(inputs: Mapping[str, Any]) -> dict[str, Any]:
    question, answer = str(inputs.get("question") or ""), str(inputs.get("answer") or "")
    said = [s for s in sentences(answer) if not s.endswith("?")]
    informative = [s for s in said if not is_decline(s, question)]
    held = {w for s in informative for w in stems(s)}
    topic = set(stems(question))
    noncommittal = not informative or not held - topic
    parts = [{"part": p, "answered": 0.0 if noncommittal else _answered(p, held, " ".join(informative))}
             for p in question_parts(question)]
    addressed, previous = [], set()
    for statement in said:
        words = set(stems(statement))
        addresses = not is_decline(statement, question) and bool(words & (topic | previous))
        previous = words if addresses else set()
        addressed.append({"statement": statement, "addresses_question": addresses})
    found = statements(answer) or [answer or question]
    return {"question_parts": parts, "statements": addressed, "noncommittal": noncommittal,
            "questions": [found[n % len(found)] for n in range(3)]}
