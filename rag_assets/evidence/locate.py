"""Find a text in the pinned revision's documents: one locator for golden labels and for the
contexts a RAG system returns.

Three ways, tried in the document the caller names (a system's source, a label's file) first, which wins
with any of them; then each in every other candidate before the next: a text found exactly or normalised in
any of them is placed there, not on a fuzzy window of a near copy that came first (a v1 page beside its v2);
among fuzzy windows the best share wins, the first candidate on a tie:

- ``exact``: the text (stripped) occurs in the body as is;
- ``normalised``: it occurs once whitespace runs are one space, Markdown emphasis, code, heading,
  quote and table marks (``* _ ` # > |``) are dropped and letters are lower case (a label copied from
  rendered HTML, or a splitter that collapsed newlines);
- ``fuzzy``: a window of the body's words, as many as the text has, shares at least ``min_score`` of
  the text's words (as multisets); the best window wins, trimmed to the first and last of its words that line up
  with the text's in order, or to a run of at least ``MIN_COPY_WORDS`` words beyond them that the text holds
  elsewhere (its sentences in another order), and its share is the reported score (a label with small edits, a
  context a loader re-flowed). A window is as long as the text, so for a text with words the body lacks (front
  matter) it runs on past where the text ends; a few words there that the text holds earlier are not part of it.

A retrieved context may also be placed by the part of it a document holds (``part``, asked for by the RAG
step, never for a label, which must be found whole): failing the three ways in every candidate, the longest run
of the text's words, in order, that a candidate holds, when it is more than half of the text's words, or when the
text and the document overlap there: at each end of the run one of the two ends (a word cut short there aside), so
the context holds all of the document, or begins inside it and runs on past its end, or ends inside it having begun
before it; such a run must hold more than half of the document's words, and at least ``MIN_OVERLAP_WORDS``. A
context placed on a run hits the document's evidence, so a smaller overlap is left unmapped: placed, it would be a
hit that the retrieval figures' overlap rule (half of the shorter of the two) makes a miss wherever the same text is
located in the corpus it came from. A system's chunk that carries the file's front matter or markup the snapshot
drops, a heading of its own, the text around a short reference document, or that overlaps a reference context (the
documents of an evaluation without a corpus, ``rag_assets.golden.sources``: a system's chunks are cut elsewhere) is
then credited for the document text it holds; a chunk that only shares a phrase with a document, or holds a stub
document of a few words, stays unmapped, and so does one whose longest run several documents hold alike (a footer
they share) unless one of them is the document the caller names.
Its score is the share of the text's words the run holds, with a word the text is cut in at either end of it (the
span takes in that word's cut part, as an exact match does); the others count as retrieved, not evidence.

Candidate documents: the one the caller names first (a system's source, a label's file), then the
documents that hold most of the text's rarest words (an inverted index built on first need), then those shorter
than the text that it may hold whole: the text holds their own rarest word (a system's page holding a reference
context, whose rarest words are elsewhere in the page).

A text found in several places (a live page and its archived copy, a passage a document repeats) is placed at
all of them, not at whichever came first: the place the rules above choose is its ``span``, the others are
``elsewhere``, in the same order (the named document, the candidates, then by path). Found as is or normalised,
its places are every occurrence in the document it was found in and in every other document that holds it as is
(each document holding all of its rarest words is searched), and its normalised occurrences in the other
candidates, at most ``MAX_PLACES`` in all. Only a text of at least ``MIN_COPY_WORDS`` words has places elsewhere: a
shorter one (a heading, a phrase) occurs in documents that are not copies of it, and every place would be one more
chance to hit. A fuzzy window or a ``part`` has one place: a window or run of another document that is as good is a
near match, not a copy of the text. The retrieval figures credit a text at any of its places and count it once
(``rag_assets.scoring.retrieval``), the importers keep every place of a reference text as its evidence
(``rag_assets.golden.pinning``): retrieving any copy of the evidence counts, and where a copy is placed by
default never turns a hit into a miss.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import Match, SequenceMatcher
from functools import cached_property

from rag_assets.evidence.documents import Document, Documents
from rag_assets.evidence.spans import Span
from rag_assets.text.tokens import tokenize

DEFAULT_MIN_SCORE = 0.8
#: raised when where a text is placed changes (v2: the ``part`` method; exact and normalised in every candidate
#: before fuzzy windows; v3: every place a text occurs; v4: other places only for a text found whole, of at least
#: ``MIN_COPY_WORDS`` words; v5: ``part`` places a context where it overlaps a document; v6: a fuzzy window ends where
#: the text's words stop lining up with it; v7: a fuzzy or part span takes in a word the text is cut in; v8: a fuzzy
#: window keeps a sentence of the text it holds out of order; v9: a document the text may hold whole is a candidate):
#: part of the code version of what stores placements (golden labels, RAG answers)
LOCATOR_VERSION = "locate-v9"
#: the most places a text keeps (its span and those elsewhere)
MAX_PLACES = 64
#: the fewest words a text must have to be placed at more than one place: a shorter one (a heading, a phrase) is
#: found in documents that are not copies of it
MIN_COPY_WORDS = 8
#: the fewest words a context and a document must share where they overlap for ``part`` to place it there (a stub
#: document, a phrase that happens to end one text and begin the other, places nothing)
MIN_OVERLAP_WORDS = 8
#: the words a run may stop short of an end of the text or the document and still reach it: a word cut in the middle
CUT_WORDS = 1
_MARKS = frozenset("*_`#>|")
# How many of a text's rarest words pick its candidate documents, and how many candidates are tried.
_RARE_WORDS = 12
_CANDIDATES = 4


@dataclass(frozen=True)
class Location:
    span: Span
    method: str  # exact | normalised | fuzzy | part
    score: float  # 1.0, or the share of the text's words the fuzzy window or the part holds
    elsewhere: tuple[Span, ...] = ()  # the other places the text is found as well as at ``span``


def _placed(found: Sequence[Location], words: int) -> Location | None:
    """The first of ``found`` (places of one text found whole, in order), with the others as its places elsewhere
    when the text has at least ``MIN_COPY_WORDS`` words: a shorter one is a phrase other documents may hold without
    being a copy of it, and each place is a chance to hit."""
    if not found:
        return None
    first = found[0]
    others = found[1:MAX_PLACES] if words >= MIN_COPY_WORDS else ()
    return Location(first.span, first.method, first.score, tuple(f.span for f in others))


def _overlap(run: Match, body: int, text: int) -> bool:
    """Whether a run that a body of ``body`` words (from ``run.a``) and a text of ``text`` words (from ``run.b``) hold
    alike is where the two overlap, over more than half of the body and at least ``MIN_OVERLAP_WORDS`` words: at each
    end of the run, the body or the text ends, but for a word cut there."""
    before = min(run.a, run.b)
    after = min(body - run.a - run.size, text - run.b - run.size)
    return max(before, after) <= CUT_WORDS and run.size >= MIN_OVERLAP_WORDS and 2 * run.size > body


def _lined_up(document: Document, words: Sequence[str], first: Match, last: Match) -> tuple[Span, int]:
    """The body from the first to the last of the runs of words that it and the text hold alike (``a`` in the body,
    ``b`` in the text), with a word the text begins or ends in the middle of: its first word when that is the end of
    the body's word before, its last when that is the start of the body's word after; and how many of those cut words
    it takes in. A context a splitter cut inside a word then ends where its text does, as it does when found
    exactly."""
    spans, body_words = document.tokens, document.words
    start, end = first.a, last.a + last.size - 1
    begin, finish, cut = spans[start][0], spans[end][1], 0
    if first.b == 1 and start > 0 and body_words[start - 1].endswith(words[0]):
        begin, cut = spans[start - 1][1] - len(words[0]), cut + 1
    if last.b + last.size == len(words) - 1 and end + 1 < len(body_words) and body_words[end + 1].startswith(words[-1]):
        finish, cut = spans[end + 1][0] + len(words[-1]), cut + 1
    return Span(document.path, begin, finish), cut


def _window_ends(window: Sequence[str], words: Sequence[str]) -> tuple[Match, Match]:
    """The first and last runs of a fuzzy window that hold the text's words: those that line up with the text in
    order, and beyond them at either end each run of at least ``MIN_COPY_WORDS`` words that the text holds in order
    elsewhere (a sentence the text has in another place). A label whose sentences the body holds in another order is
    placed on all of them, while a few words past the text's end that it holds earlier (its front matter's title) are
    left out."""
    text = list(words)
    matcher = SequenceMatcher(None, window, text, autojunk=False)
    blocks = [block for block in matcher.get_matching_blocks() if block.size]
    first, last = blocks[0], blocks[-1]
    while (run := matcher.find_longest_match(last.a + last.size, len(window), 0, len(text))).size >= MIN_COPY_WORDS:
        last = run
    while (run := matcher.find_longest_match(0, first.a, 0, len(text))).size >= MIN_COPY_WORDS:
        first = run
    return first, last


def _normalised(text: str) -> tuple[str, list[int]]:
    """The text normalised (see the module docstring) and, per character of it, its offset in ``text``."""
    chars: list[str] = []
    offsets: list[int] = []
    space = True  # drops leading whitespace
    for offset, char in enumerate(text):
        if char in _MARKS:
            continue
        if char.isspace():
            if not space:
                chars.append(" ")
                offsets.append(offset)
            space = True
            continue
        lower = char.lower()
        chars.append(lower if len(lower) == 1 else char)
        offsets.append(offset)
        space = False
    while chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    return "".join(chars), offsets


def _occurrences(haystack: str, needle: str) -> list[int]:
    """The offsets of ``needle`` in ``haystack``, in order (overlapping ones too), at most ``MAX_PLACES``."""
    found: list[int] = []
    at = haystack.find(needle)
    while at >= 0 and len(found) < MAX_PLACES:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


class Locator:
    def __init__(self, documents: Documents, min_score: float = DEFAULT_MIN_SCORE) -> None:
        if not 0 < min_score <= 1:
            raise ValueError(f"min_score must be in (0, 1], got {min_score}")
        self.documents, self.min_score = documents, min_score
        self._normal: dict[str, tuple[str, list[int]]] = {}

    def locate(self, text: str, path: str | None = None, *, part: bool = False) -> Location | None:
        """Where ``text`` is in the documents (``path`` tried first), or None; with ``part``, failing that, the
        part of it a document holds (see the module docstring)."""
        wanted = text.strip()
        if not wanted:
            return None
        words = tokenize(wanted)
        candidates, holders = self._candidates(words, path)
        named = candidates[0] if candidates and candidates[0] == path else None
        others = [c for c in candidates if c != named]
        shared: dict[str, int] = {}  # per candidate, the most words of the text one window of it holds
        if named is not None:
            found = self._whole(self.documents[named], wanted)
            if found:
                return _placed(found + self._copies(wanted, others, holders), len(words))
            window, shared[named] = self._fuzzy(self.documents[named], words)
            if window is not None:
                return window
        found = self._copies(wanted, others, holders)
        if found:
            return _placed(found, len(words))
        windows = []
        for candidate in others:
            window, shared[candidate] = self._fuzzy(self.documents[candidate], words)
            windows += [window] if window is not None else []
        if windows or not part:
            best = max((window.score for window in windows), default=None)
            return next((window for window in windows if window.score == best), None)
        # a run of the text's words lies in one window, so a window holding at most half of them rules out a run
        # over half, and one holding at most half of the document's words, or fewer than MIN_OVERLAP_WORDS, rules out
        # an overlap: those are skipped
        possible = [c for c, most in shared.items()
                    if 2 * most > len(words) or MIN_OVERLAP_WORDS <= most and 2 * most > len(self.documents[c].words)]
        parts = [found for c in possible if (found := self._part(self.documents[c], words)) is not None]
        best = max((found.score for found in parts), default=None)
        placed = [found for found in parts if found.score == best]
        if named is not None and any(found.span.path == named for found in placed):
            return next(found for found in placed if found.span.path == named)
        return placed[0] if len(placed) == 1 else None

    def _copies(self, wanted: str, others: Sequence[str], holders: Sequence[str]) -> list[Location]:
        """Every place ``wanted`` is found whole in ``others`` (as is or normalised), then as is in ``holders``."""
        found: list[Location] = []
        for candidate in others:
            found += self._whole(self.documents[candidate], wanted)
        for holder in holders:
            if len(found) >= MAX_PLACES:
                break
            found += self._exact(self.documents[holder], wanted)
        return found

    def _candidates(self, words: Sequence[str], path: str | None) -> tuple[list[str], list[str]]:
        """The candidate documents (see the module docstring), and the other documents that hold every one of the
        text's rarest words, by path: only those can hold the text as is."""
        first = [path] if path is not None and path in self.documents else []
        if len(self.documents) == len(first):
            return first, []
        postings = self._postings
        rare = sorted({w for w in words if w in postings}, key=lambda w: (len(postings[w]), w))[:_RARE_WORDS]
        counts = Counter(p for word in rare for p in postings[word] if p not in first)
        candidates = first + [p for p, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:_CANDIDATES]]
        held = set(words)
        candidates += sorted(p for p, word in self._rarest.items() if word in held and p not in candidates
                             and len(self.documents[p].words) < len(words))[:MAX_PLACES]
        holders = sorted(p for p, n in counts.items() if n == len(rare) and p not in candidates) if rare else []
        return candidates, holders

    @cached_property
    def _postings(self) -> dict[str, set[str]]:
        """Per word, the documents holding it (built on first need)."""
        postings: defaultdict[str, set[str]] = defaultdict(set)
        for path, document in self.documents.items():
            for word in set(tokenize(document.body)):
                postings[word].add(path)
        return dict(postings)

    @cached_property
    def _rarest(self) -> dict[str, str]:
        """Per document, its rarest word: a text holding a document whole holds that word."""
        postings = self._postings
        return {path: min(words, key=lambda w: (len(postings[w]), w))
                for path, document in self.documents.items() if (words := set(document.words))}

    def _whole(self, document: Document, wanted: str) -> list[Location]:
        """Every place the text is in ``document`` as it is, else every place it is normalised."""
        found = self._exact(document, wanted)
        if found:
            return found
        needle = _normalised(wanted)[0]
        if not needle:
            return []
        if document.path not in self._normal:
            self._normal[document.path] = _normalised(document.body)
        haystack, offsets = self._normal[document.path]
        return [Location(Span(document.path, offsets[at], offsets[at + len(needle) - 1] + 1), "normalised", 1.0)
                for at in _occurrences(haystack, needle)]

    @staticmethod
    def _exact(document: Document, wanted: str) -> list[Location]:
        return [Location(Span(document.path, at, at + len(wanted)), "exact", 1.0)
                for at in _occurrences(document.body, wanted)]

    def _part(self, document: Document, words: Sequence[str]) -> Location | None:
        """The longest run of ``words`` the body holds in order, if it is more than half of them or where the two
        overlap (see the module docstring)."""
        body_words = document.words
        run = SequenceMatcher(None, body_words, list(words), autojunk=False).find_longest_match(
            0, len(body_words), 0, len(words))
        if run.size == 0 or (2 * run.size <= len(words) and not _overlap(run, len(body_words), len(words))):
            return None
        span, cut = _lined_up(document, words, run, run)
        return Location(span, "part", round((run.size + cut) / len(words), 4))

    def _fuzzy(self, document: Document, words: Sequence[str]) -> tuple[Location | None, int]:
        """The best window of len(words) body words by shared words (multiset), if it reaches min_score, trimmed to its
        words that line up with the text's in order; and the words that window shares."""
        size = len(words)
        if size == 0:
            return None, 0
        body_words = document.words
        want = Counter(words)
        have: Counter = Counter()
        shared = best = 0
        best_at = -1
        for index, word in enumerate(body_words):
            if have[word] < want.get(word, 0):
                shared += 1
            have[word] += 1
            if index >= size:
                gone = body_words[index - size]
                have[gone] -= 1
                if have[gone] < want.get(gone, 0):
                    shared -= 1
            if shared > best:
                best, best_at = shared, max(0, index - size + 1)
        score = best / size
        if best_at < 0 or score < self.min_score:
            return None, best
        first, last = _window_ends(body_words[best_at:best_at + size], words)
        first, last = (Match(best_at + block.a, block.b, block.size) for block in (first, last))
        return Location(_lined_up(document, words, first, last)[0], "fuzzy", round(score, 4)), best
