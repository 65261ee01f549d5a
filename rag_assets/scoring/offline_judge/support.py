"""Whether a chunk supports a claim: shared by faithfulness, context precision and context recall.

A claim speaks of the product versions it names, else of those the question names; chunks of another version
only count if they name the wanted one. A chunk supports it when most of its content words (identifiers count
double) are in the chunk, and a third of them in one unit; every clause and every list item is covered as
well; each quantity is the value the chunk gives for the quantity's role (the best matching unit states it,
not a different value of the same kind: another plan's, row's or version's value); every identifier and name
is in the chunk, a name in a unit that matches the claim at least as well as units naming something else
instead; no chunk clause that matches it states the opposite (a negation bearing on the same words, or an
antonym); and, for a claim without values, the sentence that matches it best is not one about another version.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from rag_assets.scoring.offline_judge.chunks import _clauses, _UNIT_STEMS, Chunk, Unit
from rag_assets.scoring.offline_judge.claims import _claim, Claim
from rag_assets.scoring.offline_judge.text import _normalise, _quantities, _stem, _unique, _words, Quantity


MIN_COVERAGE = 0.6          # share of a claim's content words one chunk must contain
MIN_ANCHOR = 0.34           # share of them one sentence, line or cell of that chunk must contain
MIN_USEFUL_COVERAGE = 0.5   # share of a reference statement a useful chunk must support


def _compatible(scope: Iterable[str], wanted: Sequence[str]) -> bool:
    scope = set(scope)
    return not wanted or not scope or bool(scope & set(wanted))


def _chunk_compatible(chunk: Chunk, wanted: Sequence[str]) -> bool:
    """A chunk can speak for the wanted versions if it is of one of them or names one."""
    if not wanted or chunk.version is None or chunk.version in wanted:
        return True
    return bool(chunk.versions & set(wanted))


def _overlap(words: Iterable[str], unit: Unit) -> int:
    return sum(1 for w in words if w in unit.words)


def _comparable(mine: Quantity, theirs: Quantity) -> bool:
    return mine.unit == theirs.unit


def _quantity_support(index: int, claim: Claim, chunk: Chunk, wanted: Sequence[str]) -> bool:
    """The value the chunk gives for the quantity's role is the claim's: among the chunk's values of the
    same kind, the one whose surroundings match the quantity's best (the words around it, three times;
    the words of its clause, twice; of the whole claim; the claim's other values in the same unit) is
    equal to it. So "5 business days on Starter" is read in the Starter cell of the right row, and a value
    of another plan, version or row does not count."""
    quantity, subject = claim.quantities[index], claim.subjects[index]
    words = claim.words
    others = [q for i, q in enumerate(claim.quantities) if i != index]
    best_key: tuple[float, bool] | None = None
    for unit in chunk.units:
        if unit.row and unit.versions:
            continue  # a row of a table whose columns are versions: only its cells are scoped
        if not _compatible(chunk.scope(unit) if wanted else unit.versions, wanted):
            continue
        overlap = _overlap(words, unit)
        keyed = sum(1 for o in others if any(o.matches(q) for q in unit.key_values))
        base = 2 * _overlap(subject, unit) + overlap + keyed
        base += base / (len(unit.words) + 1) / 10
        for value in unit.values:
            same = quantity.matches(value)
            if not same and not _comparable(quantity, value):
                continue
            if same and not (overlap or not words):
                continue
            key = (round(base + 3 * len(quantity.context & value.context), 6), same)
            if best_key is None or key > best_key:
                best_key = key
    return best_key is not None and best_key[1]


def _coverage(words: Sequence[str], chunk: Chunk) -> float:
    if not words:
        return 1.0
    return sum(1 for w in words if w in chunk.words) / len(words)


def _anchor(words: Sequence[str], chunk: Chunk) -> int:
    return max((_overlap(words, u) for u in chunk.units), default=0)


def _named_ok(claim: Claim, chunk: Chunk) -> bool:
    """Every name of the claim is in the chunk, and the unit that states it matches the rest of the claim
    at least as well as any unit naming something else instead (Windows and macOS, not Linux)."""
    for name in claim.named:
        if name not in chunk.words:
            return False
        if name in claim.acronyms:
            continue  # CLI, API, CSV: product terms, present is enough
        rest = [w for w in claim.words if w != name]
        best_with = best_against = -1
        for unit in chunk.units:
            if name in unit.words:
                best_with = max(best_with, _overlap(rest, unit))
            elif unit.named - set(claim.named) - set(claim.words):
                best_against = max(best_against, _overlap(rest, unit))
        if best_with < 0 or best_with < best_against:
            return False
    return True


_ANTONYMS = {a: b for x, y in (
    ("delete", "keep"), ("delete", "stay"), ("enable", "disable"), ("allow", "block"), ("allow", "deny"),
    ("increase", "decrease"), ("include", "exclude"), ("before", "after"), ("more", "less"), ("first", "last"),
    ("require", "optional"), ("automatic", "manual"), ("automatically", "manually"), ("public", "private"),
    ("upload", "download"), ("older", "newer"), ("minimum", "maximum"), ("shorter", "longer"), ("earlier", "later"),
    ("add", "remove"), ("encrypt", "plain"), ("accept", "reject"), ("online", "offline"), ("success", "failure"),
    ("inside", "outside"), ("immediately", "later"), ("same", "different"),
) for a, b in ((_stem(x), _stem(y)), (_stem(y), _stem(x)))}


def _opposed(mine: Unit, theirs: Unit) -> bool:
    """The two units say opposite things: one is negated about what the other states, or one uses a word
    whose antonym the other uses instead."""
    if mine.negated != theirs.negated:
        negative, positive = (mine, theirs) if mine.negated else (theirs, mine)
        if len(negative.negation_scope & positive.words) >= min(2, len(negative.negation_scope)):
            return True
    for word in mine.words:
        antonym = _ANTONYMS.get(word)
        if antonym and antonym in theirs.words and word not in theirs.words and antonym not in mine.words:
            return True
    return False


def _most_similar(terms: frozenset[str], chunks: Sequence[Chunk], containing: str | None = None) -> list[Unit]:
    """The chunk clauses most similar to a set of terms (cosine of the word and value sets, at least two
    shared words, at least 0.4), optionally among the clauses that contain a given word."""
    best_key, best = 0.4, []
    for chunk in chunks:
        for clause in chunk.clauses:
            if containing and containing not in clause.words:
                continue
            other = clause.terms
            if len(terms & clause.words) < 2:
                continue
            key = round(len(terms & other) / math.sqrt(len(terms) * len(other)), 6)
            if key > best_key:
                best_key, best = key, [clause]
            elif key == best_key:
                best.append(clause)
    return best


def _polarity_conflict(claim: Claim, chunks: Sequence[Chunk]) -> bool:
    """A clause of the claim is stated the other way round by the chunk clause most similar to it, or,
    for each name in it ("Starter", "Team"), by the most similar chunk clause about that name."""
    for part in claim.parts:
        words = part.words
        if len(words) < 2:
            continue
        best = _most_similar(part.terms, chunks)
        if best and all(_opposed(part, c) for c in best):
            return True
        for name in claim.named:
            if name in words and name not in claim.acronyms:
                best = _most_similar(part.terms, chunks, containing=name)
                if best and all(_opposed(part, c) for c in best):
                    return True
    return False


def _temporal_conflict(claim: Claim, chunks: Sequence[Chunk], wanted: Sequence[str], question: str = "") -> bool:
    """The sentence that states the claim (read with the question it answers) best speaks of another
    version than the wanted one, clearly better than any sentence about the wanted version."""
    if not wanted or len(claim.words) < 2 or claim.quantities:
        return False  # a claim with values is read in the wanted version by its values
    words = _unique([*claim.words, *_words(_normalise(question))])
    best_ok = best_other = 0
    for chunk in chunks:
        for unit in chunk.units:
            if unit.row:
                continue
            overlap = _overlap(words, unit)
            if _compatible(chunk.scope(unit), wanted):
                best_ok = max(best_ok, overlap)
            else:
                best_other = max(best_other, overlap)
    return best_other >= max(2, 0.5 * len(claim.words)) and best_other >= best_ok + 2


@dataclass
class Support:
    chunk: Chunk
    coverage: float       # share of the claim's words in the chunk
    clause_coverage: float  # the same for the claim's least covered clause (of five words or more)
    anchor: float         # share of the claim's words in the chunk's best matching unit
    quantities_ok: bool
    specifics_ok: bool
    named_ok: bool

    items_ok: bool = True  # every item of a list in the claim has half its words in the chunk

    @property
    def grounded(self) -> bool:
        return (self.coverage >= MIN_COVERAGE and self.clause_coverage >= MIN_COVERAGE and self.anchor >= MIN_ANCHOR
                and self.quantities_ok and self.specifics_ok and self.named_ok and self.items_ok)


def _list_items(sentence: str) -> list[list[str]]:
    """The items of the lists in a sentence ("A, B and C"), as content words: each must be supported."""
    items: list[list[str]] = []
    for clause in _clauses(sentence):
        if "," not in clause:
            continue
        pieces = [p for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", clause) if p.strip()]
        if len(pieces) >= 3:
            items.extend(words for words in (_words(_normalise(p)) for p in pieces) if len(words) >= 2)
    return items


def _weighted_coverage(claim: Claim, chunk: Chunk) -> float:
    """Share of the claim's content found in the chunk: words count 1, identifiers (code, paths) 2.
    (Quantities are checked on their own: each must be stated in the chunk for the claim's subject.)"""
    words = _content_words(claim)
    total = len(words) + 2 * len(claim.specifics)
    if not total:
        return 1.0
    found = sum(1 for w in words if w in chunk.words)
    found += 2 * sum(1 for s in claim.specifics if s in chunk.text_low)
    return found / total


def _content_words(claim: Claim) -> list[str]:
    """The claim's words that coverage counts: a supported quantity's unit ("minute") is not one."""
    return [w for w in claim.words if w not in _UNIT_STEMS] if claim.quantities else list(claim.words)


def _support(claim: Claim, chunk: Chunk, wanted: Sequence[str]) -> Support:
    words = _content_words(claim)
    anchor = _anchor(words, chunk) / len(words) if words else 1.0
    clause_coverage = 1.0
    if len(claim.clauses) > 1:
        clause_coverage = min((_weighted_coverage(_claim(p.text), chunk) for p in claim.clauses if len(p.words) >= 5),
                              default=1.0)
    return Support(chunk, _weighted_coverage(claim, chunk), clause_coverage, anchor,
                   all(_quantity_support(i, claim, chunk, wanted) for i in range(len(claim.quantities))),
                   all(s in chunk.text_low for s in claim.specifics), _named_ok(claim, chunk),
                   all(_coverage(item, chunk) >= 0.5 for item in _list_items(claim.text)))


def _wanted_versions(claim: Claim, question: str) -> tuple[str, ...]:
    """The versions a claim speaks of: the ones it names, else the ones the question names."""
    return claim.versions or _unique(v for _, v in _quantities(_normalise(question))[1])


def _with_context(claim: Claim, question: str) -> Claim:
    """A claim too short to stand alone ("90 days.") is read with the question's words as its subject."""
    if len(claim.words) >= 2:
        return claim
    extra = _unique([*claim.words, *_words(_normalise(question))])
    subjects = tuple(tuple(_unique([*s, *extra])) for s in claim.subjects)
    return replace(claim, words=extra, subjects=subjects)


def _grounding(claim: Claim, chunks: Sequence[Chunk], question: str) -> list[str] | None:
    """Ids of the chunks that ground the claim, or None. The claim must not be contradicted by the
    context (polarity or another version) and must be grounded as a whole in one chunk, or else each
    of its clauses in some chunk."""
    wanted = _wanted_versions(claim, question)
    usable = [c for c in chunks if _chunk_compatible(c, wanted)]
    if _polarity_conflict(claim, usable) or _temporal_conflict(claim, chunks, wanted, question):
        return None
    grounded = [s.chunk.chunk_id for s in (_support(claim, c, wanted) for c in usable) if s.grounded]
    if grounded:
        return list(_unique(grounded))
    parts = _clauses(claim.text)
    if len(parts) < 2:
        return None
    found: list[str] = []
    for part in parts:
        sub = _claim(part)
        if len(sub.words) < 2 and not sub.quantities and not sub.specifics:
            continue
        sub = replace(sub, subjects=tuple(tuple(_unique([*s, *claim.words])) for s in sub.subjects),
                      versions=sub.versions or claim.versions)
        ids = [s.chunk.chunk_id for s in (_support(sub, c, wanted) for c in usable) if s.grounded]
        if not ids:
            return None
        found.extend(ids)
    return list(_unique(found)) or None


def _contradicting_value(claim: Claim, chunks: Sequence[Chunk]) -> bool:
    """A unit about the same subject states a different value of the same kind."""
    for index, quantity in enumerate(claim.quantities):
        subject = claim.subjects[index]
        need = max(1, (len(subject) + 1) // 2)
        for chunk in chunks:
            for unit in chunk.units:
                if _overlap(subject, unit) >= need and any(
                        _comparable(quantity, q) and not quantity.matches(q) for q in unit.quantities):
                    return True
    return False
