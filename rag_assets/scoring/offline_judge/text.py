"""How the offline judge reads text: stemmed content words, numbers, names, statements and declines.

Every rule here is about English in general, none about a corpus: the stopword list is the project's
(``rag_assets.text.tokens``), stems are PyStemmer's English Snowball stemmer, and the decline and hedge
phrases are generic ways of not answering.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import Stemmer

from rag_assets.text.tokens import STOPWORDS, token_spans, tokenize

_STEMMER = Stemmer.Stemmer("english")
#: a citation marker: "[1]", "[doc-3]", "[^1]", "<sup>1</sup>" (not an exponent after a digit), "【4:0†source】",
#: "(Source 1)", "(source: a.pdf, p. 12)";
#: the whitespace before it goes with it, matched from the start of its run only (linear on long blanks)
_CITATION = re.compile(r"(?<!\s)\s*(?:\[\^?[\w.#:/,\- ]{1,80}\](?!\()|(?<!\d)<sup>[^<]{1,40}</sup>|【[^】]{1,80}】"
                       r"|\((?:sources?|refs?|references?)\s*(?::|\d)[^()]{0,80}\))", re.IGNORECASE)
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+>]\s+|\d+[.)]\s+)|\*\*|__|`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
#: a clause that is a statement of its own: after a semicolon, or after ", and/but/while/whereas"
_CLAUSE = re.compile(r";\s+|,\s+(?:and|but|while|whereas)\s+")
#: digits, with their decimal, thousands or time separators; a version's "v" before them is no word ("v1.2.3")
_NUMBER = re.compile(r"(?:(?<=\b[vV])|(?<![\w.]))\d+(?:[.,:]\d+)*")
#: an inline list marker ("you need to 1) write tests, and 2) run them"): it numbers the answer's own steps
_LIST_MARKER = re.compile(r"(?:^|(?<=[\s:;,]))(?<!\d[:,.])\(?\d{1,2}\)(?=\s|$)")
#: a group of one to three digits, then groups of three after a spaced separator: "235, 000", "1 234 567"; not
#: right after a month ("March 3, 250 people" is a day and a count; only the 12 characters before a number are
#: read for it, so a long table of numbers costs linear time, not minutes)
_SPACED_GROUPS = re.compile(r"(?<![\w.,:])(?<!\d )(\d{1,3})((?:,? \d{3})+)\b(?![.,:]\d)")
_MONTH_BEFORE = re.compile(r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
                           r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s*$", re.IGNORECASE)
_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {w: str(n) for n, w in zip(
        range(30, 100, 10), "thirty forty fifty sixty seventy eighty ninety".split())}
#: a clock time on a 12-hour dial ("5 pm", "5:30 p.m.", "12 AM") and one on a 24-hour dial ("17:30", "9:00"; "17:0", as
#: some data exports write a minute, is 17:00); not a part of a longer run of digits ("10:30:15", "1.5:1")
_CLOCK_12 = re.compile(r"(?<![\w.:,])(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*([ap])\.?m\b\.?", re.IGNORECASE)
_CLOCK_24 = re.compile(r"(?<![\w.:,])([01]?\d|2[0-3]):([0-5]?\d)(?!\d|[.:,]\d)")
#: a number in words of tens and units: "twenty-four", "thirty one"
_COMPOUND = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|four|five|six"
                       r"|seven|eight|nine)\b")
#: words that shape a question without naming what it is about ("how many", "explain", "what kind of")
_ASKING = frozenset(_STEMMER.stemWords("many much long often kind type sort way explain describe tell list give "
                                       "name mean happen please know".split()))
#: generic ways of declining or of not knowing (an answer made only of these answers nothing)
_DECLINE = re.compile(
    r"\b(?:i\s+(?:do\s+not|don't|cannot|can't|am\s+unable\s+to|am\s+not\s+able\s+to)\s+(?:really\s+)?"
    r"(?:know|say|tell|answer|find|help|determine|provide|confirm)"
    r"|(?:i\s+am|i'm)\s+not\s+(?:sure|certain)|hard\s+to\s+say|unable\s+to\s+(?:answer|determine|find|provide)"
    r"|(?:i\s+|we\s+)?(?:could|can)(?:\s+not|n['’]t|not)\s+(?:find|locate|determine|tell|answer|confirm)"
    r"|unable\s+to\s+locate|not\s+possible\s+to\s+(?:determine|say|tell|answer)"
    r"|(?:don['’]t|do\s+not)\s+have\s+(?:enough|sufficient|any)\s+information"
    r"|(?:no|not\s+enough|insufficient|lacks?(?:\s+any)?)\s+(?:relevant\s+)?(?:information|details|data|context)"
    r"|(?:no|any)\s+mention|(?:are|is)\s+silent\s+on|none\s+of\s+the\s+\w+(?:\s+\w+)?\s+(?:discuss|mention|say|cover)"
    r"|nothing\s+in\s+the\s+\w+\s+(?:address|mention|say|cover|discuss)"
    r"|(?:gives?|has|offers?|provides?)\s+no\s+(?:definite\s+|clear\s+|direct\s+)?answer"
    r"|(?:does|do|did)(?:\s+not|n['’]t)\s+(?:mention|say|state|specify)"
    r"|(?:is|are|was|were)(?:\s+not|n['’]t)\s+(?:mentioned|specified|stated|clear)"
    r"|cannot\s+be\s+(?:determined|answered|found)|there\s+is\s+no\s+(?:mention|way\s+to\s+(?:know|tell)))\b",
    re.IGNORECASE)
#: what a source does not hold, said in words that also state facts of the world ("water does not contain
#: proteins", "cruise control isn't included"): a decline only where a source is its subject or its place
_LACKS = re.compile(r"\b(?:(?:does|do|did)(?:\s+not|n['’]t)\s+(?:provide|contain|include|address|cover|give|discuss)"
                    r"|(?:is|are|was|were)(?:\s+not|n['’]t)\s+(?:provided|given|available|covered|found|discussed"
                    r"|included))\b", re.IGNORECASE)
#: the sources an answer looked in
_SOURCE_WORDS = "context document documentation text excerpt passage source article manual information material"
_SOURCE_NOUN = r"(?:" + "|".join(f"{w}s?" for w in _SOURCE_WORDS.split()) + ")"
_SOURCE_IN_PHRASE = re.compile(_SOURCE_NOUN, re.IGNORECASE)
#: a source as the subject before a phrase ("the retrieved documents do not ...") or its place after it ("... is
#: not found in the provided context")
_SOURCE_BEFORE = re.compile(r"\b(?:the|these|those|this|provided|given|retrieved|available|supplied)\s+(?:\w+\s+){0,2}"
                            + _SOURCE_NOUN + r"\s*$", re.IGNORECASE)
_SOURCE_AFTER = re.compile(r"\s*(?:in|from|within)\s+(?:the|these|those|this|any)\s+(?:\w+\s+){0,2}" + _SOURCE_NOUN
                           + r"\b", re.IGNORECASE)
#: the words a decline is framed in: where the answer looked, and apologies ("Unfortunately, the retrieved
#: documents do not specify ..."); they do not count as something a declining sentence states
_DECLINE_FRAME = frozenset(_STEMMER.stemWords(
    f"based provided given retrieved available supplied unfortunately sorry afraid {_SOURCE_WORDS}".split()))
#: generic hedges and pleasantries that state nothing about the question ("it depends", "I hope this helps")
_HEDGE = re.compile(r"\b(?:it\s+depends|depends\s+on\s+(?:a\s+number\s+of|many|various)\s+factors|may\s+vary"
                    r"|can\s+vary|generally\s+speaking|as\s+is\s+often\s+the\s+case|best\s+to\s+check"
                    r"|hope\s+(?:this|that)\s+helps|feel\s+free\s+to|great\s+question"
                    r"|let\s+me\s+know\s+if\s+you\s+(?:need|have)\s+(?:anything\s+else"
                    r"|any\s+(?:other\s+|more\s+)?questions)"
                    r"|happy\s+to\s+help)\b",
                    re.IGNORECASE)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return word if any(ch.isdigit() for ch in word) else _STEMMER.stemWord(word)


def clock_times(text: str) -> str:
    """``text`` with each clock time written one way, on a 24-hour dial with two-digit minutes ("5:30 pm", "17:30"
    and "17:30" are "17:30"; "11 AM" and "11:0" are "11:00"): a time is one number whatever the notation, and its
    "AM" or "PM" no word of it (nor a name)."""
    def twelve(m: re.Match[str]) -> str:
        return f"{int(m[1]) % 12 + (12 if m[3].lower() == 'p' else 0)}:{m[2] or '00'}"
    # spaced apart, so that a range ("11:0-22:0") is two times, not a word "00-22"
    return _CLOCK_24.sub(lambda m: f" {int(m[1])}:{int(m[2]):02d} ", _CLOCK_12.sub(twelve, text))


def stems(text: str) -> list[str]:
    """The stems of the content words (no stopwords, no one-letter words; clock times as ``clock_times``; the parts
    of an identifier, "review_count" holds "review" and "count"), in order."""
    return [_stem(w) for w in tokenize(clock_times(text).replace("_", " ")) if w not in STOPWORDS and len(w) > 1]


def numbers(text: str) -> frozenset[str]:
    """The numbers written with digits, thousands separators dropped ("1,000" and "1000" are one). Inline list
    markers ("1) ...", "(2) ...") are not numbers the text states; a "2)" closing parentheses ("(version 2)") is,
    and so is the tail of a time or ratio ("10:30)")."""
    def marker(match: re.Match[str]) -> str:
        inside = "(" in text[:match.start()].rsplit(")", 1)[-1]
        return match.group() if inside else " "
    return frozenset(re.sub(r"(?<=\d),(?=\d{3}\b)", "", n) for n in _NUMBER.findall(_LIST_MARKER.sub(marker, text)))


def _spaced(text: str, keep: Callable[[str], bool] = lambda joined: True) -> str:
    """``text`` with each number written in spaced groups ("235, 000", "1 234 567"; not right after a month) that
    ``keep`` accepts joined into one ("235000")."""
    def join(m: re.Match[str]) -> str:
        joined = m[1] + re.sub(r"\D", "", m[2])
        month = _MONTH_BEFORE.search(m.string, max(0, m.start() - 12), m.start())
        return joined if not month and keep(joined) else m.group()
    return _SPACED_GROUPS.sub(join, text)


def claimed_numbers(claim: str, held: frozenset[str]) -> frozenset[str]:
    """The numbers a claim states in digits (``numbers``), a clock time as ``clock_times`` writes it, a number in
    spaced groups read as one where the chunks hold it so ("1 234 567" in a claim, "1,234,567" in a chunk)."""
    return numbers(_spaced(clock_times(claim), lambda joined: joined in held))


def numbers_stated(text: str) -> frozenset[str]:
    """The numbers a text states in digits or in words up to ninety-nine ("number one hit" states 1): what a claim's
    digits are looked up in. A claim's own words are not read as numbers ("the one that"), only its digits.
    Digit groups split by a spaced separator ("235, 000" in tokenised text, "235 000" in SI style) are read
    both ways, as one number and as a list, since either may be meant ("64, 128 and 256" is a list). A clock time
    is read as written and as ``clock_times`` writes it ("11 AM" states 11 and 11:00)."""
    lower = text.lower()
    words = re.findall(r"[a-z]+", lower)
    spaced = numbers(_spaced(text))
    compound = frozenset(str(int(_NUMBER_WORDS[tens]) + int(_NUMBER_WORDS[unit]))
                         for tens, unit in _COMPOUND.findall(lower))
    return numbers(text) | numbers(clock_times(text)) | spaced | compound | frozenset(_NUMBER_WORDS[w] for w in words if w in _NUMBER_WORDS)


def without_numbers(text: str) -> str:
    return _NUMBER.sub(" ", text)


def names(text: str) -> frozenset[str]:
    """Stems of capitalised words that do not open the sentence (proper names, as far as case tells)."""
    return frozenset(w for run in name_runs(text) for w in run)


def name_runs(text: str) -> list[frozenset[str]]:
    """The proper names of ``names``, one per run of adjacent capitalised words ("Ray Kurzweil"): a name is
    held where any of its words is (a source that writes "Kurzweil" names the same man)."""
    text = clock_times(text)
    spans = token_spans(text)
    runs: list[list[str]] = []
    last_end = None
    for start, end in spans[1:]:
        w = text[start:end]
        if w[0].isupper() and w.lower() not in STOPWORDS and len(w) > 1:
            if runs and last_end is not None and text[last_end:start].strip() == "":
                runs[-1].append(_stem(w.lower()))
            else:
                runs.append([_stem(w.lower())])
            last_end = end
        else:
            last_end = None
    return [frozenset(r) for r in runs]


def asked(question: str) -> list[str]:
    """The stems a question asks about: its content stems less the words that only shape a question."""
    return [w for w in stems(question) if w not in _ASKING]


def strip_citations(text: str) -> str:
    return _CITATION.sub("", text)


def sentences(text: str) -> list[str]:
    """Sentences of prose, one per list item, heading or table row (cells joined); markup dropped."""
    out: list[str] = []
    for line in strip_citations(text).split("\n"):
        line = line.strip()
        if line.startswith(("```", "~~~")) or set(line) <= set("-|: "):
            continue
        if line.startswith("|"):
            line = " ".join(cell.strip() for cell in line.strip("|").split("|"))
        line = _MARKUP.sub("", line).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if stems(s))
    return out


#: the content words a clause needs to state something of its own (see ``statements`` and ``is_decline``)
OWN_WORDS = 3


def statements(text: str) -> list[str]:
    """The text's statements: its sentences, each split into clauses that carry three content words of
    their own (a shorter clause leans on the rest of its sentence). Questions are not statements."""
    out: list[str] = []
    for sentence in sentences(text):
        if sentence.endswith("?"):
            continue
        clauses = [c.strip() for c in _CLAUSE.split(sentence) if c.strip()]
        if len(clauses) > 1 and all(len(stems(c)) >= OWN_WORDS for c in clauses):
            out.extend(clauses)
        else:
            out.append(sentence)
    return out


def _about_a_source(sentence: str, match: re.Match[str]) -> bool:
    """Whether a decline phrase speaks of the sources: one names them ("none of the sources discuss"), is their
    subject ("the documents do not mention") or their place ("is not found in the provided context")."""
    return bool(_SOURCE_IN_PHRASE.search(match.group())
                or _SOURCE_BEFORE.search(sentence, max(0, match.start() - 60), match.start())
                or _SOURCE_AFTER.match(sentence, match.end()))


def is_decline(sentence: str, question: str = "") -> bool:
    """A sentence that declines, does not know, or hedges, and states nothing beyond it. Its decline and hedge
    phrases taken out, it states something when a number is left that the question does not give ("Error 42 is
    raised when the document is not found"), or, unless a phrase speaks of the sources ("The documents do not
    mention how long the device is covered"), three content words beyond the question's and beyond the words a
    decline is framed in ("based on the provided context", "unfortunately"). "I'm not sure how good they are."
    declines; "I don't know him, but he is a great athlete and philanthropist." states something. Words that
    also state facts of the world ("does not contain", "isn't included") decline only about a source: "Water
    does not contain proteins." and "Cruise control isn't included." are claims to check."""
    lacks = [m for m in _LACKS.finditer(sentence) if _about_a_source(sentence, m)]
    declines = list(_DECLINE.finditer(sentence))
    hedges = list(_HEDGE.finditer(sentence))
    if not (lacks or declines or hedges):
        return False
    rest = sentence
    for m in sorted(lacks + declines + hedges, key=lambda m: m.start(), reverse=True):
        rest = rest[:m.start()] + " " + rest[m.end():]
    if numbers(rest) - numbers(question):
        return False
    if lacks or any(_about_a_source(sentence, m) for m in declines):
        return True
    return len(set(stems(rest)) - set(stems(question)) - _DECLINE_FRAME) < OWN_WORDS
