"""The offline question generator: deterministic, extractive, one writer per question type.

Answers are readable sentences copied from the chunks (``rag_assets.generation.readable``: prose
only, no code, JSON, links or glued words), so every non-adversarial answer is supported by its
relevant chunks word for word. Questions are built from those sentences and from the chunks'
headings with fixed templates (``rag_assets.generation.questions``), so they read as questions
rather than keyword salad. It is a stand-in that keeps the whole lifecycle runnable without a key,
and labels itself provider=offline; Claude writes far better questions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rag_assets.generation.questions import (
    about_section, absent_from, across, from_sentence, in_version, lower_first, summary, version_change, well_formed,
)
from rag_assets.generation.readable import readable_sentences
from rag_assets.text.tokens import content_words, has_number

DECLINE_ANSWER = "The documentation does not cover this, so the correct response is to say it cannot be answered from the documentation."


def _item(question: str | None, answer: str, chunk_ids: list[str]) -> dict[str, Any] | None:
    if question is None or not well_formed(question):
        return None
    return {"question": question, "answer": answer, "relevant_chunk_ids": chunk_ids}


def _asked(chunk: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(question, answer) pairs of one chunk, distinct questions only: first every readable sentence a
    pattern turns into a question (stated numbers first), then its section's question, answered by
    the section's first readable sentence."""
    readable = readable_sentences(chunk["text"])
    facts = sorted(readable, key=lambda s: not has_number(s))
    pairs = [(q, s) for s in facts if (q := from_sentence(s, chunk["text"]))]
    if readable and (q := about_section(chunk)):
        pairs.append((q, readable[0]))
    asked: dict[str, str] = {}
    for question, answer in pairs:
        question = in_version(question, chunk.get("version"))
        if well_formed(question):
            asked.setdefault(question, answer)
    return list(asked.items())


def _factual(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk = inputs["chunks"][0]
    asked = _asked(chunk)
    if index >= len(asked):
        return None
    return _item(*asked[index], [chunk["chunk_id"]])


def _shared(first: Mapping[str, Any], second: Mapping[str, Any]) -> tuple[str | None, str, str] | None:
    """(term, sentence of first, sentence of second): the longest word both chunks' readable sentences
    use (None when they share none) and the first sentence of each that uses it, else each chunk's
    first readable sentence; None when either chunk has no readable sentence."""
    ours, theirs = readable_sentences(first["text"]), readable_sentences(second["text"])
    if not ours or not theirs:
        return None
    their_words = {w for s in theirs for w in content_words(s)}
    shared = [w for s in ours for w in content_words(s) if w in their_words and any(c.isalpha() for c in w)]
    if not shared:
        return None, ours[0], theirs[0]
    term = max(dict.fromkeys(shared), key=len)
    a, b = (next(s for s in found if term in content_words(s)) for found in (ours, theirs))
    written = re.search(rf"(?<!\w){re.escape(term)}(?!\w)", a, re.IGNORECASE)
    return lower_first(written.group(0) if written else term, f"{first['text']}\n{second['text']}"), a, b


def _multi_hop(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    first, second = inputs["chunks"][:2]
    shared = _shared(first, second)
    if index or not shared or not shared[0]:
        return None
    term, a, b = shared
    question = across(first, second, term)
    return _item(question and in_version(question, first.get("version")), f"{a} {b}",
                 [first["chunk_id"], second["chunk_id"]])


def _abstractive(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk = inputs["chunks"][0]
    readable = list(dict.fromkeys(readable_sentences(chunk["text"])))  # some pages repeat a sentence
    if index or len(readable) < 2:
        return None
    question = summary(chunk)
    return _item(question and in_version(question, chunk.get("version")), " ".join(readable[:2]), [chunk["chunk_id"]])


def _comparative(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    first, second = inputs["chunks"][:2]
    shared = _shared(first, second)
    if index or not shared:
        return None
    term, a, b = shared
    old, new = first.get("version"), second.get("version")
    if old and new and old != new:
        return _item(version_change(first, old, new), f"In version {old}: {a} In version {new}: {b}",
                     [first["chunk_id"], second["chunk_id"]])
    return _item(term and across(first, second, term, compare=True), f"{a} {b}",
                 [first["chunk_id"], second["chunk_id"]])


def _adversarial(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    chunk, absent = inputs["chunks"][0], inputs.get("absent_topic")
    if index or not absent:
        return None
    question = absent_from(chunk, absent)
    return _item(question and in_version(question, chunk.get("version")), DECLINE_ANSWER, [])


def _terminology(inputs: Mapping[str, Any], index: int) -> dict[str, Any] | None:
    """A factual question with the chunk's words swapped for everyday ones it never uses."""
    chunk, synonyms = inputs["chunks"][0], inputs.get("synonyms") or {}
    candidates = []
    for question, answer in _asked(chunk):
        swapped = re.sub(r"[A-Za-z]+", lambda m: synonyms.get(m.group(0).lower(), m.group(0)), question)
        if swapped != question:
            candidates.append((swapped, answer))
    if index >= len(candidates):
        return None
    return _item(*candidates[index], [chunk["chunk_id"]])


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
