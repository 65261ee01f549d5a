"""What an answer's sentence states, and the sentences that state nothing.

A claim is a sentence with its content words, values, identifiers, names and clauses. Declines, hedges,
pointers elsewhere ("see the documentation"), placeholders ("you can do this in the settings") and
pleasantries state nothing and are not claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rag_assets.scoring.offline_judge.chunks import _clauses, _polarity_parts, _unit, Unit
from rag_assets.scoring.offline_judge.text import (
    _named, _normalise, _quantities, _specifics, _split_sentences, _stem, _strip_citations, _unique, _words,
    Quantity,
)


_DECLINE = re.compile(
    r"\b(?:cannot|can't|can ?not|unable to|not able to|won't be able to)\b[^.]{0,60}?\b(?:answer|say|tell|determine|"
    r"find|help|provide|confirm|know|respond)\b"
    r"|\b(?:does|do|did)(?: not|n't) (?:cover|mention|say|specify|contain|include|provide|describe|address|state|"
    r"document)"
    r"|\b(?:no|not enough|insufficient|no specific|limited) (?:information|details|data|context|documentation)\b"
    r"|\bno (?:definite|definitive|clear|direct|straight|simple|single) answer\b"
    r"|\b(?:do not|don't|does not|doesn't|did not|didn't) (?:have|contain|include|provide) (?:enough|sufficient|any)\b"
    r"|\bi (?:do not|don't|am not|'m not) (?:know|sure|certain|aware)"
    r"|\b(?:not sure|unsure|uncertain|no idea|hard to say|difficult to say|impossible to say|not clear|unclear)\b"
    r"|\bit (?:really )?depends\b|\bdepends on (?:many|several|various|a number of|your|the|how|what|which)\b"
    r"|\b(?:varies|may vary|can vary|could vary)\b"
    r"|\bnot (?:covered|documented|mentioned|specified|stated|described)\b"
    r"|\bcould not find\b|\bcouldn't find\b|\bnot in the (?:documentation|context|provided)",
    re.IGNORECASE)
_POINTER = re.compile(
    r"\b(?:contact|reach out to|ask|email|call) (?:your |the |an? )?(?:support|sales|administrator|admin|account|"
    r"kestrel|it department|vendor|customer success|team)"
    r"|\b(?:refer|see|check|consult|look at|read|visit|review|follow)\b[^.]{0,40}\b(?:documentation|docs|guide|page|"
    r"manual|section|website|help center|knowledge base|faq|release notes|reference|article)\b"
    r"|\bfor (?:more|further|additional) (?:details|information|info)\b"
    r"|\b(?:hope this helps|let me know|feel free)\b",
    re.IGNORECASE)
_META_WORDS = frozenset(_stem(w) for w in (
    "know let hope help helps need anything else question questions feel free happy sure check details detail "
    "information info contact support refer see consult documentation docs guide page answer provided context "
    "depend depends vary varies exact exactly specific specifics case situation circumstances ask team reach able "
    "find found say tell recommend sales various factors unfortunately sorry cannot clear unclear certain idea "
    "follow steps quote contract").split())


@dataclass(frozen=True)
class Claim:
    text: str
    words: tuple[str, ...]                  # stemmed content words, in order, without duplicates
    named: tuple[str, ...]                  # capitalised words inside the sentence
    specifics: tuple[str, ...]              # identifiers, paths, code
    quantities: tuple[Quantity, ...]        # numbers with units (product versions excluded)
    subjects: tuple[tuple[str, ...], ...]   # per quantity: the words of its clause
    versions: tuple[str, ...]               # product versions the claim names
    clauses: tuple[Unit, ...]
    acronyms: tuple[str, ...] = ()          # the names written in capitals (CLI, CSV)
    parts: tuple[Unit, ...] = ()            # the clauses cut at commas, for polarity


_PARTICLE = re.compile(r"^\s*(?:yes|no|sure|okay|ok|right|correct|indeed)\b\s*[,.!:;-]\s*", re.IGNORECASE)


@lru_cache(maxsize=8192)
def _claim(sentence: str) -> Claim:
    text = sentence
    sentence = _PARTICLE.sub("", sentence) or sentence  # "No, X does not..." states that X does not
    norm = _normalise(sentence)
    quantities, version_like = _quantities(norm)
    versions = _unique(v for _, v in version_like)
    words = _unique(_words(norm))
    parts = [_unit(p) for p in _clauses(sentence)] or [_unit(sentence)]
    kept, subjects = [], []
    for quantity in quantities:
        if quantity.unit == "version":
            continue
        kept.append(quantity)
        clause = next((p for p in parts if quantity in p.quantities), None)
        subjects.append(tuple(sorted(clause.words)) if clause else words)
    acronyms = _unique(_stem(t.lower()) for t in re.findall(r"\b[A-Z][A-Z0-9]+s?\b", norm))
    return Claim(text, words, _unique(_named(norm)), _unique(_specifics(norm)), tuple(kept), tuple(subjects),
                 versions, tuple(parts), acronyms, tuple(_unit(p) for p in _polarity_parts(sentence)))


def _is_hedge(sentence: str) -> bool:
    """A sentence that declines, hedges or points elsewhere instead of stating a fact."""
    if not (_DECLINE.search(sentence) or _POINTER.search(sentence)):
        return False
    norm = _normalise(sentence)
    if _quantities(norm)[0] or _specifics(norm):
        return False
    return len([w for w in _words(norm) if w not in _META_WORDS]) <= 4


_VAGUE = re.compile(
    r"\b(?:do|does|did|handle[sd]?|manage[sd]?|configure[sd]?|change[sd]?|set|find|adjust|control|take[sn]? care of|"
    r"takes care of|deal[st]? with|sort(?:s|ed)? out|fix(?:es|ed)?)\s+(?:this|that|it|these|those|them)\b"
    r"|\b(?:this|that|it|these|those|they)\s+(?:is|are|can be|may be|should be|will be)\s+(?:\w+\s+)?"
    r"(?:configurable|possible|supported|available|handled|managed|done|automatic|adjustable|changeable|"
    r"customi[sz]able|set up|taken care of)\b"
    r"|\bfor (?:a while|some time)\b",
    re.IGNORECASE)
_SHORT_COPULA = re.compile(r"^(?:it|this|that|they)(?:'s| is| are| was| were) (?:just |simply )?"
                           r"(?:a|an|the|one of the) "
                           r"[a-z-]+(?: [a-z-]+)?[.!]?$", re.IGNORECASE)


def _is_vague(sentence: str) -> bool:
    """No checkable content: a placeholder stands for the answer ("you can do this in the agent", "that is
    configurable"), with few content words, no number and no identifier."""
    norm = _normalise(sentence)
    if _quantities(norm)[0] or _specifics(norm) or _named(norm):
        return False
    if _SHORT_COPULA.match(norm.strip()) and not re.search(r"[A-Z]", norm.strip()[1:]):
        return True  # "It is a sync error."
    if not _VAGUE.search(norm):
        return False
    return len([w for w in _words(norm) if w not in _META_WORDS]) <= 4


def _claim_sentences(answer: str, chunk_ids: Iterable[str] = ()) -> list[str]:
    """The answer's sentences that state something: no decline, hedge or pleasantry."""
    out = []
    for sentence in _split_sentences(_strip_citations(answer, chunk_ids)):
        if _is_hedge(sentence):
            continue
        norm = _normalise(sentence)
        if len(_words(norm)) < 2 and not _quantities(norm)[0] and not _specifics(norm):
            continue
        out.append(sentence)
    return out
