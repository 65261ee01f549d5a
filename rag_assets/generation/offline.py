"""The offline question generator: deterministic, extractive, one writer per question type.

Answers are sentences copied from the chunks, so every non-adversarial answer is supported by
its relevant chunks word for word; questions are built from those sentences with simple
patterns. It is a stand-in that keeps the whole lifecycle runnable without a key, and labels
itself provider=offline; Claude writes far better questions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rag_assets.text.tokens import content_words, has_number, sentences

_COPULA = re.compile(
    r"^(?P<article>The |An |A )?(?P<subject>[A-Za-z0-9][^,;:()]{2,60}?) (?P<verb>is|are) (?P<rest>.{3,})$"
)
_NOT_A_SUBJECT_START = {"in", "on", "at", "for", "when", "if", "this", "it", "these", "each", "there", "that", "from"}
_PARTICIPLE = re.compile(r"^(?:\w+ed|kept|sent|made|shown|held|done|set|run|built|split|written|taken|given)\b")
_NUMBER_PHRASE = re.compile(r"(?<![\w./:-])(\d[\d,.]*)(?: ?(%|[A-Za-z]+))?")
_UNITS = {"gb", "tb", "mb", "kb", "days", "day", "hours", "hour", "minutes", "minute", "seconds", "second",
          "requests", "devices", "files", "members", "vaults", "retries", "users", "times", "years", "months",
          "mbit/s", "characters", "snapshots", "weeks"}
DECLINE_ANSWER = "The documentation does not cover this, so the correct response is to say it cannot be answered from the documentation."


def _in_version(chunk: Mapping[str, Any]) -> str:
    return f"In version {chunk['version']}, " if chunk.get("version") else ""


def _fact_sentences(chunk: Mapping[str, Any]) -> list[str]:
    """Sentences worth asking about: stated facts first (numbers), then any prose of fair length."""
    usable = [s for s in sentences(chunk["text"]) if 30 <= len(s) <= 300 and len(content_words(s)) >= 3]
    return sorted(usable, key=lambda s: (not has_number(s), usable.index(s)))


def _cloze(sentence: str) -> str | None:
    """'Team workspaces can keep up to 365 days.' -> 'Team workspaces can keep up to how many days?'"""
    for match in _NUMBER_PHRASE.finditer(sentence):
        unit = (match.group(2) or "").lower()
        if unit in _UNITS or unit == "%":
            asked = "what percentage" if unit == "%" else f"how many {match.group(2)}"
            return sentence[:match.start()] + asked + sentence[match.end():].rstrip(" .") + "?"
    return None


def _copula(sentence: str) -> str | None:
    """'The default Hub port is 7443.' -> 'what is the default Hub port?'"""
    match = _COPULA.match(sentence.rstrip("."))
    if not match:
        return None
    subject = match.group("subject")
    words = subject.split()
    if (len(words) > 6 or words[0].lower() in _NOT_A_SUBJECT_START or words[-1].lower() in ("and", "or")
            or _PARTICIPLE.match(match.group("rest"))):
        return None
    article = "the " if match.group("article") == "The " else ""
    return f"what {match.group('verb')} {article}{subject}?"


def question_for(sentence: str, chunk: Mapping[str, Any]) -> str:
    """A question whose answer is ``sentence``."""
    question = _copula(sentence) or _cloze(sentence)
    if question is None:
        topic = chunk["heading"].split(" > ")[-1] if chunk.get("heading") else chunk["title"]
        about = [w for w in content_words(sentence) if not w.isdigit()][:3]
        question = f"what does the documentation on {topic} say about {' '.join(about)}?"
    elif question.split()[0] in ("The", "A", "An"):
        question = question[0].lower() + question[1:]
    question = f"{_in_version(chunk)}{question}"
    return question[0].upper() + question[1:]


def _item(question: str, answer: str, chunk_ids: list[str]) -> dict[str, Any]:
    return {"question": question, "answer": answer, "relevant_chunk_ids": chunk_ids}


def _factual(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk = inputs["chunks"][0]
    facts = _fact_sentences(chunk)
    if index >= len(facts):
        return None
    return _item(question_for(facts[index], chunk), facts[index], [chunk["chunk_id"]])


def _shared_word(first: Mapping[str, Any], second: Mapping[str, Any]) -> str | None:
    shared = [w for w in content_words(first["text"]) if w in set(content_words(second["text"])) and not w.isdigit()]
    return max(dict.fromkeys(shared), key=len) if shared else None


def _best_sentence(chunk: Mapping[str, Any], word: str | None) -> str | None:
    facts = _fact_sentences(chunk)
    with_word = [s for s in facts if word and word in content_words(s)]
    return (with_word or facts or [None])[0]


def _multi_hop(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    first, second = inputs["chunks"][:2]
    word = _shared_word(first, second)
    a, b = _best_sentence(first, word), _best_sentence(second, word)
    if index or not (word and a and b):
        return None
    question = (f"{_in_version(first)}what do the documents '{first['title']}' and '{second['title']}' "
                f"together say about {word}?")
    return _item(question[0].upper() + question[1:], f"{a} {b}", [first["chunk_id"], second["chunk_id"]])


def _abstractive(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk = inputs["chunks"][0]
    prose = [s for s in sentences(chunk["text"]) if len(content_words(s)) >= 3]
    if index or len(prose) < 2:
        return None
    topic = chunk["heading"].split(" > ")[-1] if chunk.get("heading") else chunk["title"]
    question = f"{_in_version(chunk)}summarize what the documentation explains about {topic}."
    return _item(question[0].upper() + question[1:], " ".join(prose[:2]), [chunk["chunk_id"]])


def _comparative(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    first, second = inputs["chunks"][:2]
    word = _shared_word(first, second)
    a, b = _best_sentence(first, word), _best_sentence(second, word)
    if index or not (a and b):
        return None
    topic = first["heading"].split(" > ")[-1] if first.get("heading") else first["title"]
    if first.get("version") and second.get("version") and first["version"] != second["version"]:
        question = f"How does {topic} differ between version {first['version']} and version {second['version']}?"
        answer = f"In version {first['version']}: {a} In version {second['version']}: {b}"
    else:
        question = f"How do '{first['title']}' and '{second['title']}' compare on {word or topic}?"
        answer = f"{a} {b}"
    return _item(question, answer, [first["chunk_id"], second["chunk_id"]])


def _adversarial(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk, absent = inputs["chunks"][0], inputs.get("absent_topic")
    if index or not absent:
        return None
    topic = chunk["heading"].split(" > ")[-1] if chunk.get("heading") else chunk["title"]
    question = f"{_in_version(chunk)}how do you use {absent} together with {topic}?"
    return _item(question[0].upper() + question[1:], DECLINE_ANSWER, [])


def _terminology(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk, synonyms = inputs["chunks"][0], inputs.get("synonyms") or {}
    candidates = []
    for sentence in _fact_sentences(chunk):
        question = question_for(sentence, chunk)
        swapped = re.sub(r"[A-Za-z]+", lambda m: synonyms.get(m.group(0).lower(), m.group(0)), question)
        if swapped != question:
            candidates.append((swapped, sentence))
    if index >= len(candidates):
        return None
    swapped, sentence = candidates[index]
    return _item(swapped[0].upper() + swapped[1:], sentence, [chunk["chunk_id"]])


WRITERS: dict[str, Callable[[Mapping[str, Any], int], dict[str, Any] | None]] = {
    "factual": _factual,
    "multi_hop": _multi_hop,
    "abstractive": _abstractive,
    "comparative": _comparative,
    "adversarial": _adversarial,
    "terminology": _terminology,
}


def offline_questions(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Answer the generation template offline: up to ``count`` questions of the requested type."""
    writer = WRITERS[inputs["question_type"]]
    questions = [q for q in (writer(inputs, i) for i in range(inputs["count"])) if q is not None]
    return {"questions": questions}
