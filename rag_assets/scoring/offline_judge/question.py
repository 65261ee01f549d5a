"""What a question asks: its parts, each with its focus words and the type of answer it expects.

A part is a clause with its own question word ("What does Starter cost, and how much storage does it
include?" has two). Its focus: its content words, a leading condition's included ("When deciding whether
to use CoT, what are..." is about CoT). Its expected answer type, from its question word:
a date or time ("when", "what year"), a quantity ("how many", "how long", "what is the maximum"),
a person or role ("who"), a place ("where", "in what country"), a reason ("why"), a method ("how do
I", "what are the steps"), yes or no ("is", "does", "can" first); anything else ("what", "which")
expects a thing, which any statement about the focus can name. A type is met by a statement that
gives such a value that the question does not already contain (a restatement answers nothing).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag_assets.scoring.offline_judge.text import _named, _normalise, _quantities, _words

_WH = r"(?:what|which|when|where|who|whom|whose|why|how)"
_PART_SPLIT = re.compile(rf"\?\s+|,?\s+and\s+(?={_WH}\b)|;\s*(?={_WH}\b)", re.IGNORECASE)
# "When deciding whether to use X, what are ...": a leading "when/if" clause is a condition, not the question
_CONDITION = re.compile(r"^(?:when|if|while|before|after|once|as|in|on|for|according to)\b[^,?]*,\s*(?=\w)",
                        re.IGNORECASE)
_YES_NO = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|had|may|must|shall)\b",
                     re.IGNORECASE)
_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((t, re.compile(p, re.IGNORECASE)) for t, p in (
    ("time", r"^(?:when\b|what (?:year|date|day|month|time|century|decade|version|release)|"
             r"(?:in|since|until|by) (?:what|which) (?:year|date|day|month|century|decade|version|release))"),
    ("quantity", r"^(?:how (?:many|much|long|often|large|big|small|far|fast|old|high|low|frequently)\b|"
                 r"what (?:is|was|are|were) the (?:\w+ )?(?:number|size|limit|maximum|minimum|price|cost|rate|"
                 r"percentage|amount|count|duration|length|capacity|cap|fee|quota|population)\b|"
                 r"what (?:percentage|proportion|fraction|share|number|amount)\b)"),
    ("person", r"^(?:who|whom|whose)\b"),
    ("place", r"^(?:where\b|(?:in|from|to|at) (?:what|which) (?:country|city|region|state|place|continent|"
              r"county|province|town|area|location)|what (?:country|city|region|state|place|continent|location)\b)"),
    ("reason", r"^(?:why\b|what (?:is|was|are|were) the (?:reason|cause|purpose|benefit|advantage)s?\b)"),
    ("method", r"^(?:how (?:do|does|did|can|could|should|would|to|is|are)\b|what (?:are|were) the steps\b|"
               r"what steps\b)"),
))

_YEAR = r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b"
_MONTH = (r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
          r"jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b")
_TIME_VALUE = re.compile(
    rf"{_YEAR}|{_MONTH}|\b\d+(?:st|nd|rd|th)\b|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth)\s+"
    r"(?:century|centuries|decade|year|day|week|month)|\bcentur(?:y|ies)\b|\b\d{1,2}:\d{2}\b|\b\d+\.\d+\b|"
    r"\b(?:daily|weekly|monthly|yearly|annually|hourly|nightly|today|tomorrow|yesterday|ago|immediately|"
    r"instantly|now|currently|soon|later|earlier|never|always)\b|\b(?:before|after|during|until|once|since|"
    r"whenever|when|while|within|every|each)\s+\w+", re.IGNORECASE)
_REASON_VALUE = re.compile(r"\b(?:because|since|due to|owing to|so that|in order to|as a result|thanks to|"
                           r"to (?:avoid|prevent|ensure|reduce|improve|allow|enable|protect|keep|make|help)|"
                           r"allows?|enables?|helps?|prevents?|ensures?|reduces?|improves?|so|therefore|thus|"
                           r"leads? to|results? in|causes?)\b", re.IGNORECASE)
_METHOD_VALUE = re.compile(r"^(?:\s*(?:first|then|next|finally|to \w+,?)\s*)?(?:open|click|select|go|use|run|set|"
                           r"call|send|add|enable|disable|configure|create|enter|choose|type|install|pass|include|"
                           r"specify|provide|write|put|define|start|make|check|follow|navigate|sign|log)\b"
                           r"|\b(?:by (?:\w+ing|using)|you (?:can|should|need to|must|may)|using|use|steps?|"
                           r"via|through|with the)\b", re.IGNORECASE)
_ROLE = re.compile(r"\b(?:owner|administrator|admin|user|member|manager|team|customer|developer|engineer|role|group|"
                   r"support|king|queen|duke|leader|president|founder|author|people|person|company|organi[sz]ation|"
                   r"government|army|church|family)s?\b", re.IGNORECASE)
_PLACE_VALUE = re.compile(r"\b(?:in|at|on|under|from|inside|near|within|into) (?:the |a |an |your |its )?\w+",
                          re.IGNORECASE)


@dataclass(frozen=True)
class Part:
    text: str
    focus: tuple[str, ...]     # stemmed content words
    expects: str               # time | quantity | person | place | reason | method | yes_no | thing


def _expects(part: str) -> str:
    for kind, pattern in _TYPES:
        if pattern.search(part):
            return kind
    return "yes_no" if _YES_NO.match(part) else "thing"


def parts(question: str) -> list[Part]:
    """The question's parts (at least one), each with its focus words and expected answer type."""
    out = []
    for piece in _PART_SPLIT.split(question.strip()):
        piece = piece.strip(" ,;?")
        asked = _CONDITION.sub("", piece).strip()
        wh = re.search(rf"\b{_WH}\b", asked, re.IGNORECASE)
        if wh and wh.start() > 0 and not _YES_NO.match(asked) and "," in asked[:wh.start()]:
            asked = asked[wh.start():]  # "Claude for Sheets, what..." -> the clause with the question word
        focus = tuple(dict.fromkeys(_words(_normalise(piece))))  # a condition's words are part of the topic
        if focus:
            out.append(Part(piece, focus, _expects(asked)))
    return out or [Part(question, tuple(dict.fromkeys(_words(_normalise(question)))), "thing")]


def _new_named(statement: str, question: str) -> bool:
    asked = set(_named(_normalise(question), first=True)) | set(_words(_normalise(question)))
    return any(n not in asked for n in _named(_normalise(statement), first=True))


def _new_quantity(statement: str, question: str) -> bool:
    asked = {q.value for q in _quantities(_normalise(question))[0]}
    return any(q.value not in asked for q in _quantities(_normalise(statement))[0])


def _new_match(pattern: re.Pattern[str]) -> Callable[[str, str], bool]:
    def met(statement: str, question: str) -> bool:
        asked = {m.group(0).lower() for m in pattern.finditer(question)}
        return any(m.group(0).lower() not in asked for m in pattern.finditer(statement))
    return met


_MET: dict[str, Callable[[str, str], bool]] = {
    "time": lambda s, q: _new_match(_TIME_VALUE)(s, q),
    "quantity": lambda s, q: _new_quantity(s, q) or bool(re.search(r"\b(?:unlimited|no limit|none|zero)\b", s, re.I)),
    "person": lambda s, q: _new_named(s, q) or _new_match(_ROLE)(s, q),
    "place": lambda s, q: _new_named(s, q) or _new_match(_PLACE_VALUE)(s, q),
    "reason": lambda s, q: _new_match(_REASON_VALUE)(s, q),
    "method": lambda s, q: _new_match(_METHOD_VALUE)(s, q),
}
#: The kinds of answer a statement can be checked to give (a time, a quantity...); other parts ("summarise the
#: page", "what is X") have no value to check, so a short first sentence is not taken as their elliptical answer.
TYPED = frozenset(_MET)


def type_met(part: Part, statement: str, question: str) -> bool:
    """The statement gives a value of the kind the part asks for, not already in the question."""
    met = _MET.get(part.expects)
    return True if met is None else met(statement, question)
