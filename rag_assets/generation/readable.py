"""What of a chunk the offline generator may build questions from: prose sentences and headings.

The offline generator copies its answers from a chunk and builds its questions from the same
sentences and headings, so whatever it reads must be prose a person wrote. A code line, a JSON
snippet, a link or a word glued together when markup was stripped ("RoleContentUserExtract") would
come back as keyword salad, so all of these are rejected here rather than repaired.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag_assets.text.tokens import content_words, sentences

_WORD = re.compile(r"[A-Za-z0-9]+(?:['’._-][A-Za-z0-9]+)*")
# Characters and sequences prose hardly uses but code, JSON, markup and links do (a price's "$" and a
# semicolon before a space are prose), and a sentence glued to the next without a space ("Claude!Design").
_NOT_PROSE = re.compile(r"[{}\[\]<>=\\|@#~^]|\$(?!\d)|;(?! )|://|www\.|\(\)|->|::|\w\.\w+\(|[!?]\w")
# Glued words: two lower-to-upper humps, a lower-case word run into a capitalised one, a sentence
# run into the next across its full stop, or more letters in a row than English words have.
_GLUED = re.compile(r"[a-z][A-Z].*[a-z][A-Z]|^[a-z]{4,}[A-Z]|[a-z]{2}\.[A-Z][a-z]|[A-Za-z]{21,}")
_HEADING_NUMBER = re.compile(r"^\d+[.)]\s+")
_TRAILING_ASIDE = re.compile(r"\s*\([^()]*\)$")
_LABEL = re.compile(r"[A-Za-z0-9 ,:'’&/+.()-]+")


def words(text: str) -> list[str]:
    """The words of ``text`` as written (case kept; joined by ' . _ - within a word)."""
    return _WORD.findall(text)


def fused(word: str) -> bool:
    """Several words glued into one ("RoleContentUserYou", "libraryGet", "claude.ai.Tip"); a name with
    one hump ("TypeScript", "macOS") is not."""
    return bool(_GLUED.search(word))


def _prose(sentence: str, own_words: set[str]) -> bool:
    """A statement in plain prose whose every word is one of the chunk's own words, none fused."""
    found = words(sentence)
    return (30 <= len(sentence) <= 300 and sentence[0].isupper() and sentence.endswith(".")
            and not _NOT_PROSE.search(sentence) and sentence.count("(") == sentence.count(")")
            and sentence.count('"') % 2 == 0 and len(content_words(sentence)) >= 3
            and all(w.lower() in own_words and not fused(w) for w in found))


def readable_sentences(text: str) -> list[str]:
    """The chunk's prose statements in order, emphasis marks dropped (sentence splitting already drops
    bold and code marks); a sentence the cleaning glued words in fails the own-words test."""
    own_words = {w.lower() for w in words(text)}
    cleaned = (s.replace("*", "").strip() for s in sentences(text))
    return [s for s in cleaned if s and _prose(s, own_words)]


def clean_label(label: str) -> str | None:
    """A heading or title fit to quote in a question: leading numbering and a trailing aside such as
    "(2.0)" dropped; None when it holds code, quotes, fused words or is too long to read as a name."""
    label = _TRAILING_ASIDE.sub("", _HEADING_NUMBER.sub("", label.strip())).strip(" :")
    found = words(label)
    if not found or len(found) > 10 or not _LABEL.fullmatch(label) or _NOT_PROSE.search(label):
        return None
    return None if any(fused(w) for w in found) else label


def section(chunk: Mapping[str, Any]) -> tuple[str, str] | None:
    """(label, "section" or "page"): the chunk's innermost heading, or its document's title."""
    parts = (chunk.get("heading") or "").split(" > ")
    label = clean_label(parts[-1]) if len(parts) > 1 else None
    if label:
        return label, "section"
    label = clean_label(parts[0]) or clean_label(chunk.get("title") or "")
    return (label, "page") if label else None

