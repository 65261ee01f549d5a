"""Tokens, sentences and keywords: the small text toolkit of the offline heuristics.

Deliberately simple and deterministic (no models, no downloads); shared by the offline
generator, the reference RAG system and the offline judge so they read text the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9]+(?:[._'-][a-z0-9]+)*")
# The same words found in the text as written, so their offsets are the text's own (lowercasing can
# change a string's length: "İ" becomes two code points).
_WORD_ANY_CASE = re.compile(_WORD.pattern, re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+\.\s+|>\s*)")

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours ourselves out over own per same she should so
some such than that the their theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your yours yourself
yourselves may might must shall via within without using use used one two also can't don't doesn't
""".split())


def tokenize(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word of ``text``, in its own character offsets."""
    return [match.span() for match in _WORD_ANY_CASE.finditer(text)]


def content_words(text: str) -> list[str]:
    """Tokens that carry meaning: no stopwords, no one-letter words."""
    return [t for t in tokenize(text) if t not in STOPWORDS and len(t) > 1]


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    left, right = set(a), set(b)
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def is_prose_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("|", "```", "~~~", "<")) and not set(stripped) <= set("-|: ")


def sentences(text: str) -> list[str]:
    """Prose sentences of a chunk: headings, table rows and code fences are left out."""
    out: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not is_prose_line(line) or re.match(r"^\s*#{1,6}\s", line):
            continue
        cleaned = _MARKUP.sub("", line).replace("**", "").replace("`", "").strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(cleaned) if len(s.strip()) > 2)
    return out


def has_number(text: str) -> bool:
    return bool(re.search(r"\d", text))
