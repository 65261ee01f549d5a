"""Grammatical questions from a chunk's own sentences and headings: one template per shape found.

A sentence is turned into a question only where a simple pattern finds its structure: a purpose
clause ("To rotate a key, ..." -> "How do you rotate a key?"), a condition ("If two people edit a
file, ..." -> "What happens if two people edit a file?"), or a subject before an auxiliary ("The
default port is 7443." -> "What is the default port?"; "... are kept for 90 days." -> "How many days
are ... kept?"; "Admins can pause sync." -> "Can admins pause sync?"). Anything else is asked about
through its section, named by its heading in quotes, so no template needs to know a phrase's grammar.
Every word a question holds comes from its template, the sentence or a heading: never a bag of
keywords.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rag_assets.generation.readable import clean_label, section

OPENERS = frozenset("What Which Who When Where Why How Is Are Was Were Does Do Did Can Could Should Must Will "
                    "May".split())
_AUX = "is|are|was|were|can|cannot|must|should|will|may"
_SUBJECT = re.compile(rf"(?P<subject>[A-Z0-9][\w'’.-]*(?: [\w'’./-]+){{0,5}}?) (?P<aux>{_AUX}) (?P<rest>\w.{{6,}})")
# Words a subject does not start with (it would point back at an earlier sentence, or the sentence
# opens with a clause) and words a subject does not hold (a relative or subordinate clause, or a
# pronoun: a heading run into the sentence after it, "Starter prompt You will ...").
_NOT_A_SUBJECT = frozenset("it its this that these those there here they we he she his her their our my in on at "
                           "for from when if while as only also however then so but and or once after before by "
                           "with to since because although note see".split())
_NOT_IN_A_SUBJECT = frozenset("that which who whom whose where when if because while than this these those you we it "
                              "they he she".split())
_PURPOSE = re.compile(r"To (?P<goal>[a-z][\w'’-]*(?: [^,]{1,80})?), \S.{2,}")
_CONDITION = re.compile(r"(?P<kw>If|When) (?P<cond>[^,]{5,100}), (?P<rest>\S.{2,})")
# Verbs an instruction opens with ("If the agent stalls, restart it."): such a condition asks what to do.
_INSTRUCTIONS = frozenset("open click select choose use run set add remove delete enable disable go check contact make "
                          "see read install reinstall restart try update upgrade configure create enter press wait ask "
                          "follow exclude move rename sign copy change edit save close turn switch ensure verify "
                          "confirm review call send increase reduce replace download upload".split())
_VAGUE = frozenset("it this that these those they them so".split())
_AMOUNT = re.compile(r"(?:(?:up to|at most|at least|only|about|around|approximately|more than|less than) )?"
                     r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+) (?P<unit>[KMGTP]B|[a-z]{2,}s(?: per [a-z]+)?)$")
_DANGLING = frozenset("for to of up within after by every in about than at over under".split())


def lower_first(phrase: str, text: str) -> str:
    """Lower-case the first word where it is only capitalised for opening the sentence: not a name,
    which has capitals inside ("API", "TypeScript") or is capitalised mid-sentence somewhere in ``text``."""
    first, _, tail = phrase.partition(" ")
    named = first[1:] != first[1:].lower() or re.search(rf"[a-z,] {re.escape(first)}(?!\w)", text)
    return phrase if named else f"{first.lower()} {tail}".strip()


def _purpose(body: str) -> str | None:
    match = _PURPOSE.fullmatch(body)
    if not match or set(match["goal"].lower().split()) & _VAGUE:
        return None
    return f"How do you {match['goal']}?"


def _condition(body: str) -> str | None:
    match = _CONDITION.fullmatch(body)
    if not match or match["cond"].split()[0].lower() in _VAGUE:
        return None
    happens = "should you do" if match["rest"].split()[0] in _INSTRUCTIONS | {"you"} else "happens"
    return f"What {happens} {match['kw'].lower()} {match['cond']}?"


def _subject_first(body: str, text: str) -> str | None:
    """A question about the subject of "<subject> <auxiliary> <rest>": how many of an amount the rest
    ends with, what the subject is when the rest is a noun phrase, else whether the rest holds."""
    match = _SUBJECT.fullmatch(body)
    if not match or any(mark in match["rest"] for mark in ",:;"):
        return None
    said = match["subject"].lower().split()
    if said[0] in _NOT_A_SUBJECT or said[-1] in ("and", "or", "of") or set(said) & _NOT_IN_A_SUBJECT:
        return None
    subject, aux, rest = lower_first(match["subject"], text), match["aux"], match["rest"]
    amount = _AMOUNT.search(rest) if aux != "cannot" else None
    left = rest[:amount.start()].split() if amount else []
    while left and left[-1].lower() in _DANGLING:
        left.pop()
    if amount and left:
        return f"How many {amount['unit']} {aux} {subject} {' '.join(left)}?"
    if aux in ("is", "are", "was", "were") and re.match(r"(?:an?|the)\b|\d", rest):
        return f"What {aux} {subject}?"
    return f"{'Can' if aux == 'cannot' else aux.capitalize()} {subject} {rest}?"


def from_sentence(sentence: str, text: str) -> str | None:
    """A question whose answer is ``sentence`` (a readable sentence of the chunk ``text``), or None
    when no pattern finds its structure."""
    body = sentence.rstrip(". ")
    return _purpose(body) or _condition(body) or _subject_first(body, text)


def in_version(question: str, version: str | None) -> str:
    """Scope a question to its chunk's product version, unless it names the version already."""
    if not version or re.search(rf"(?<![\w.]){re.escape(version)}(?![\w])", question):
        return question
    return f"{question[:-1]} in version {version}?"


def well_formed(question: str) -> bool:
    """Opens with a question word or an auxiliary, ends with "?", never says a word twice in a row."""
    said = re.findall(r"[\w'’.-]+", question.lower())
    return (question.split(" ", 1)[0] in OPENERS and question.endswith("?")
            and all(a != b for a, b in zip(said, said[1:])))


def about_section(chunk: Mapping[str, Any]) -> str | None:
    """The chunk's own heading when it is a question (an FAQ entry), else what its section explains."""
    heading = (chunk.get("heading") or "").split(" > ")[-1].strip()
    if heading.endswith("?") and heading.split(" ", 1)[0] in OPENERS and clean_label(heading[:-1]):
        return heading
    named = section(chunk)
    return f"What does the '{named[0]}' {named[1]} explain?" if named else None


def summary(chunk: Mapping[str, Any]) -> str | None:
    named = section(chunk)
    return f"Can you summarize the '{named[0]}' {named[1]}?" if named else None


def version_change(chunk: Mapping[str, Any], old: str, new: str) -> str | None:
    named = section(chunk)
    return f"How does the '{named[0]}' {named[1]} differ between version {old} and version {new}?" if named else None


def absent_from(chunk: Mapping[str, Any], topic: str) -> str | None:
    named = section(chunk)
    return f"What does the '{named[0]}' {named[1]} say about {topic}?" if named else None


def across(first: Mapping[str, Any], second: Mapping[str, Any], term: str, compare: bool = False) -> str | None:
    """Ask two documents, named by their titles, about a term both use (how they compare, or what each says)."""
    one, two = clean_label(first.get("title") or ""), clean_label(second.get("title") or "")
    if not one or not two or one == two:
        return None
    if compare:
        return f"How do '{one}' and '{two}' compare on '{term}'?"
    return f"What do '{one}' and '{two}' each say about '{term}'?"
