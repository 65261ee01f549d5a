"""Answer relevance: the questions an answer answers, and whether it is noncommittal.

The answer's factual sentences, split into three groups (so that sentences about other topics pull their
question away from the one asked), each turned into a question by replacing the values it gives with the
words that ask for them ("every 15 minutes" -> "how often"); noncommittal when no sentence states a fact:
only declines, hedges, pointers elsewhere or placeholders ("you can do this in the settings").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rag_assets.scoring.offline_judge.claims import _DECLINE, _is_hedge, _is_vague, _META_WORDS
from rag_assets.scoring.offline_judge.text import (
    _normalise, _quantities, _specifics, _split_sentences, _STOP, _strip_citations, _TIME_UNITS, _UNITS,
    _VERSION_SHAPE, _words,
)


_URL = re.compile(r"\b(?:https?|ftp)://\S+")
_SIZE_UNITS = ("gb", "tb", "mb", "kb", "kb/s", "mbit/s", "usd", "byte", "character")


def _ask_value(match: re.Match[str]) -> str:
    """The question words that stand for a value: "every 15 minutes" -> "how often", "$10" -> "how much"."""
    raw, every = match.group("value"), match.group("every")
    number = re.match(r"\$?\s?([\d.,:]+)", raw)
    if number and _VERSION_SHAPE.match(number.group(1)) and raw.strip() == number.group(1):
        return match.group(0)  # a product version stays in the question
    unit_word = (match.group("unit") or "").lower()
    unit = _UNITS.get(unit_word)
    if every and unit in _TIME_UNITS:
        return " how often "
    if unit in _TIME_UNITS:
        return " how long "
    if raw.startswith("$") or unit in _SIZE_UNITS:
        return " how much "
    if unit == "%":
        return " what percentage "
    if unit_word and unit_word not in _STOP:
        return f" how many {match.group('unit')} "
    return " "


_VALUE = re.compile(r"(?P<every>\bevery\s+)?(?P<value>\$?\s?(?<![\w.-])\d[\d,.:]*)"
                    r"(?:\s?-?\s?(?P<unit>%|[A-Za-z]+(?:/s)?))?")


def _without_values(text: str) -> str:
    """The text with the values it gives replaced by the words that ask for them, versions kept."""
    text = _URL.sub(" ", _strip_citations(text))
    text = _VALUE.sub(_ask_value, text)
    text = re.sub(r"\s+([,.;:?!])", r"\1", re.sub(r"\s+", " ", text))
    return text.strip(" ,.;:!?-")


def _question_for(sentence: str) -> str:
    """The question a sentence answers: the sentence with its values replaced by the words that ask for
    them ("Snapshots are taken every 15 minutes" -> "snapshots are taken how often")."""
    text = _without_values(sentence)
    if not text:
        return "What is stated?"
    return f"What about: {text[0].lower()}{text[1:]}?"


def _three_groups(sentences: Sequence[str]) -> list[list[str]]:
    n = len(sentences)
    if n == 1:
        return [[sentences[0]]] * 3
    if n == 2:
        return [[sentences[0]], [sentences[1]], list(sentences)]
    size, extra = divmod(n, 3)
    groups, start = [], 0
    for index in range(3):
        end = start + size + (1 if index < extra else 0)
        groups.append(list(sentences[start:end]))
        start = end
    return groups


def _noncommittal(answer: str, sentences: Sequence[str], factual: Sequence[str]) -> bool:
    if not answer.strip():
        return True
    if not factual:
        return True
    first = sentences[0] if sentences else answer
    norm = _normalise(answer)
    if _DECLINE.search(first) and not _quantities(norm)[0] and not _specifics(norm) and len(factual) <= 1:
        return True
    return False


def answer_questions(inputs: Mapping[str, Any]) -> dict[str, Any]:
    answer = _strip_citations(str(inputs.get("answer") or ""))
    sentences = _split_sentences(answer)
    factual = [s for s in sentences if not _is_hedge(s) and not _is_vague(s)
               and ([w for w in _words(_normalise(s)) if w not in _META_WORDS] or _quantities(_normalise(s))[0])]
    noncommittal = _noncommittal(answer, sentences, factual)
    basis = factual or sentences or [answer.strip() or "nothing"]
    questions = [" ".join(_question_for(s) for s in group) for group in _three_groups(basis)]
    if len(set(questions)) < 3:  # the same content three times: vary only words the embedder ignores
        prefixes = ("", "So, ", "And then: ")
        questions = [f"{prefix}{q}" for prefix, q in zip(prefixes, questions)]
    return {"questions": questions, "noncommittal": noncommittal}
