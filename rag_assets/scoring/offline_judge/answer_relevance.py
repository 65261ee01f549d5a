"""Answer relevance: does the answer answer what was asked, all of it, and nothing else?

Not word overlap with the question (which rewards an answer that restates it): per part of the question
(see ``question``), the share of its focus words the addressing statements cover, halved when no statement
gives the kind of answer the part expects (a time for "when", a number for "how many", a reason for "why");
a short first statement that names none of the question's words but gives that kind of answer ("In
1066.") is an elliptical answer and covers its part. Per statement: it addresses the question when it names a focus
word, is such an elliptical answer, or continues an addressing statement ("It also..."). Noncommittal when
no sentence adds anything to the question: only declines, hedges, pointers elsewhere, placeholders ("you
can do this in the settings") or restatements of the question. The score (see formulas) is completeness
times the share of addressing statements, 0 when noncommittal.

Three reverse questions (ragas) come with it, for the embedding variant used with a semantic embedder: the
answer's informative sentences in three groups, each turned into a question by replacing the values it
gives with the words that ask for them ("every 15 minutes" -> "how often").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rag_assets.scoring.offline_judge.claims import _DECLINE, _is_hedge, _is_vague, _META_WORDS, _POINTER
from rag_assets.scoring.offline_judge.question import TYPED, parts, type_met
from rag_assets.scoring.offline_judge.text import (
    _normalise, _quantities, _specifics, _split_sentences, _STOP, _strip_citations, _TIME_UNITS, _UNITS,
    _VERSION_SHAPE, _words,
)


#: a part whose focus the answer covers without giving the kind of answer asked for ("when" without a time)
UNMET_TYPE_CREDIT = 0.5

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


_CONTINUES = re.compile(r"^(?:it|its|they|their|them|this|these|that|those|he|she|his|her|there|also|then|both|"
                        r"each|either|however|but|and|so|instead|otherwise|in (?:this|that) case)\b", re.IGNORECASE)
ELLIPTICAL_WORDS = 4  # a statement this short that names none of the question's words reads as "(the answer is) X"


def _new_words(sentence: str, asked: set[str]) -> list[str]:
    return [w for w in _words(_normalise(sentence)) if w not in asked and w not in _META_WORDS]


def _informative(sentence: str, asked: set[str]) -> bool:
    """The sentence adds something to the question: not a decline, hedge, pointer elsewhere or placeholder
    (a restatement of the question does not count as content: "I can't say in what country Normandy is")."""
    norm = _normalise(sentence)
    values = bool(_quantities(norm)[0] or _specifics(norm))
    new = _new_words(sentence, asked)
    if (_DECLINE.search(sentence) or _POINTER.search(sentence)) and not values and len(new) <= 4:
        return False
    if _is_hedge(sentence) or _is_vague(sentence):
        return False
    return bool(new or values)


def _noncommittal(answer: str, sentences: Sequence[str], informative: Sequence[str]) -> bool:
    if not answer.strip() or not informative:
        return True
    first = sentences[0] if sentences else answer
    norm = _normalise(answer)
    return bool(_DECLINE.search(first) and not _quantities(norm)[0] and not _specifics(norm) and len(informative) <= 1)


def _reverse_questions(basis: Sequence[str]) -> list[str]:
    """Three questions the answer answers (ragas), for the embedding variant of answer relevance."""
    questions = [" ".join(_question_for(s) for s in group) for group in _three_groups(basis)]
    if len(set(questions)) < 3:  # the same content three times: vary only words the embedder ignores
        prefixes = ("", "So, ", "And then: ")
        questions = [f"{prefix}{q}" for prefix, q in zip(prefixes, questions)]
    return questions


def answer_relevance(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Per part of the question, how fully the answer answers it; per statement, whether it addresses the
    question; the noncommittal flag; and three reverse questions."""
    question = str(inputs.get("question") or "")
    answer = _strip_citations(str(inputs.get("answer") or ""))
    sentences = _split_sentences(answer)
    asked = set(_words(_normalise(question)))
    informative = [s for s in sentences if _informative(s, asked)]
    asks = parts(question)
    focus = {w for p in asks for w in p.focus}
    statements, previous = [], False
    for index, sentence in enumerate(informative):
        words = set(_words(_normalise(sentence)))
        elliptical = index == 0 and not words & focus and len(_new_words(sentence, asked)) <= ELLIPTICAL_WORDS and (
            len(informative) == 1 or any(p.expects in TYPED and type_met(p, sentence, question) for p in asks))
        addresses = bool(words & focus) or elliptical or (previous and bool(_CONTINUES.match(sentence)))
        statements.append((sentence, addresses, elliptical))
        previous = addresses
    addressing = [s for s, addresses, _ in statements if addresses]
    said = {w for s in addressing for w in _words(_normalise(s))}
    answered = []
    for part in asks:
        met = any(type_met(part, s, question) for s in addressing)
        if not part.focus:  # "What is it?" names nothing to look for: any informative sentence covers it
            coverage = 1.0 if informative else 0.0
        elif any(e and type_met(part, s, question) for s, _, e in statements):
            coverage = 1.0
        else:
            coverage = sum(1 for w in part.focus if w in said) / len(part.focus)
        answered.append({"part": part.text, "answered": round(coverage * (1.0 if met else UNMET_TYPE_CREDIT), 6)})
    return {"question_parts": answered,
            "statements": [{"statement": s, "addresses_question": a} for s, a, _ in statements],
            "noncommittal": _noncommittal(answer, sentences, informative),
            "questions": _reverse_questions(informative or sentences or [answer.strip() or "nothing"])}
