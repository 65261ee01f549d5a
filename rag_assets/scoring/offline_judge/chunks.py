"""A retrieved chunk, read as units and clauses.

Units: sentences, bullet and code lines, table rows, and table cells, each cell with its row label and column
header (a column headed "2.0" scopes its values to version 2.0): the spans inside which a fact is stated.
Clauses: sentences split at clause boundaries, for polarity (negated or not, and what the negation bears on).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rag_assets.scoring.offline_judge.text import (
    _is_separator, _is_un_word, _MARKUP, _named, _normalise, _quantities, _SENTENCE_END, _stem, _table_cells,
    _TIME_UNITS, _UNITS, _words, Quantity,
)


_NEGATIONS = frozenset({"not", "no", "never", "cannot", "none", "nothing", "neither", "nor", "nobody", "without",
                        "disabled", "removed", "stop", "stops", "stopped", "prevent", "prevents", "prevented",
                        "refused", "rejected", "exempt", "impossible", "prohibited", "forbidden", "disallowed",
                        "excluded", "absent"})

_VERB_AFTER_AND = ("is|are|was|were|can|cannot|will|must|may|should|has|have|does|do|keeps|deletes|removes|uses|runs|"
                   "becomes|stays|returns|shows|sends|creates|takes|gets|needs|requires|supports|allows|offers|"
                   "includes|adds|stores|retries|rotates|expires|applies|works|lists|moves|unlinks|suspends|"
                   "re-encrypts|prints|fails|opens|downloads|uploads|gives|replaces|counts|lasts|lets|goes|went|"
                   "raised|rose|changed|became|kept|moved|got|had|did|then|no|not|nobody|never|none|nothing")
_CLAUSE_SPLIT = re.compile(r";|,\s+(?:but|while|whereas|although|though|so|because|unless|except|which|where)\b"
                           r"|\s+but\s+|,\s+(?=(?:not|never|no)\b)|\s+-{1,2}\s+|\s+–\s+|:\s+"
                           r"|,?\s+and\s+(?:\w+ly\s+)?(?=(?:" + _VERB_AFTER_AND + r")\b)|,\s+(?:and|or)\s+")

_UNIT_STEMS = frozenset(_stem(k) for k in (*_UNITS, *_TIME_UNITS) if k not in ("times", "x"))


@dataclass(frozen=True)
class Unit:
    """A sentence, line or table cell: the span inside which a fact is stated."""

    text: str
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    versions: frozenset[str]   # product versions the unit names (or its table column is about)
    negated: bool
    negation_scope: frozenset[str]
    named: frozenset[str]      # capitalised words inside it
    row: bool = False          # a whole table row (its cells are units of their own)
    keys: int | None = None    # a table cell: its first quantities are the row's and column's, not values

    @property
    def values(self) -> tuple[Quantity, ...]:
        """The values it states (a cell's own, not those of its row label)."""
        return self.quantities if self.keys is None else self.quantities[self.keys:]

    @property
    def key_values(self) -> tuple[Quantity, ...]:
        """The values that say what it is about (a cell's row label; any value of a sentence)."""
        return self.quantities if self.keys is None else self.quantities[:self.keys]

    @property
    def terms(self) -> frozenset[str]:
        """Its words and its values ("#7443"): what two clauses are compared on."""
        return self.words | {f"#{q.value}" for q in self.quantities}


_PRE_NEGATIONS = frozenset({"not", "no", "never", "cannot", "none", "nothing", "neither", "nor", "nobody", "without"})


def _negation(text: str) -> tuple[bool, frozenset[str]]:
    """Whether the text is negated (an odd number of negations: "without changes, no snapshot" is not;
    "does not expire unless X" is not either), and the words the negations bear on: the words of the
    clause before and after "not", "no"... (only after "without"); around a negative verb ("removed",
    "stopped", "unchanged"). A negation followed by no content word ("cannot use it") is not counted:
    what it negates is said elsewhere."""
    tokens = re.findall(r"[a-z][a-z0-9'-]*|[.,;:()!?]", text.lower())
    scope: list[str] = []
    count = 0
    unless = False
    for i, token in enumerate(tokens):
        if token == "unless":
            unless = True
            continue
        pre = token in _PRE_NEGATIONS or token.endswith("n't")
        verb = not pre and (token in _NEGATIONS or _is_un_word(token))
        if not (pre or verb) or (token == "not" and tokens[i + 1:i + 2] == ["only"]):
            continue
        after = []
        for word in tokens[i + 1:i + (6 if pre else 4)]:
            if word in ".,;:()!?":
                break
            after.append(word)
        if pre and not any(_words(w) for w in after):
            continue
        count += 1
        before = []
        if verb or token != "without":
            for word in reversed(tokens[max(0, i - 4):i]):
                if word in ".,;:()!?":
                    break
                before.append(word)
        for word in (*before, token, *after):
            scope.extend(_words(word))
    return count % 2 == 1 and not unless, frozenset(scope)


def _versions_in(text: str) -> frozenset[str]:
    """Product versions a text names ("in 2.0", "the 1.6 agent"); not "OAuth 2.0" or "TLS 1.3"."""
    return frozenset(v for _, v in _quantities(text)[1])


def _unit(text: str, scope: frozenset[str] = frozenset(), row: bool = False, value: str | None = None,
          negated: bool | None = None, cell: str | None = None) -> Unit:
    """``value``: the unit is a table cell read with its labels (``text`` ends with the ``cell``); its
    names and negation are the value's. ``negated``: the polarity is known (an FAQ's short answer)."""
    norm = _normalise(text)
    quantities, _ = _quantities(norm)
    keys = max(0, len(quantities) - len(_quantities(_normalise(cell))[0])) if cell is not None else None
    if value is not None:
        negated = _negation(_normalise(value))[0] if negated is None else negated
        negation = (negated, frozenset(_words(norm)) if negated else frozenset())
        named = frozenset()  # title-case labels and headers are not names
    else:
        negation = _negation(norm)
        named = frozenset(_named(norm))
    if negated is not None and value is None:
        negation = (negated, frozenset(_words(norm)) if negated else frozenset())
    return Unit(text, frozenset(_words(norm)), tuple(quantities), _versions_in(norm) | scope, negation[0],
                negation[1], named, row, keys)


def _polarity_parts(sentence: str) -> list[str]:
    """Clauses, a clause that is a list of three items or more cut into its items: the spans a negation
    is read in ("0 success, 1 error, 4 Hub unreachable" is a list, not one negated statement)."""
    out = []
    for clause in _clauses(sentence):
        items = [p.strip() for p in clause.split(", ") if len(p.strip()) > 1]
        listed = len(items) >= 4 or (len(items) == 3 and re.match(r"(?:and|or)\s", items[-1]))
        out.extend(items if listed else [clause])
    return out


def _clauses(sentence: str) -> list[str]:
    parts = [p.strip(" ,") for p in _CLAUSE_SPLIT.split(sentence) if p]
    return [p for p in parts if len(re.findall(r"[A-Za-z]{2,}", p)) >= 1]


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    version: str | None
    text_low: str               # normalised, lowercased, whitespace collapsed (for specific tokens)
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    units: tuple[Unit, ...]     # sentences, lines, table rows and table cells
    clauses: tuple[Unit, ...]   # sentences split at clause boundaries, and table cells (for polarity)
    versions: frozenset[str]    # product versions the chunk is about (metadata and mentions)

    def scope(self, unit: Unit) -> frozenset[str]:
        """The versions a unit speaks of: the ones it names, else the chunk's own."""
        return unit.versions or (frozenset({self.version}) if self.version else frozenset())


def _prose_units(line: str) -> list[str]:
    cleaned = _MARKUP.sub("", line).replace("`", "").replace("**", "").strip()
    return [s.strip() for s in _SENTENCE_END.split(cleaned) if len(s.strip()) > 1]


@lru_cache(maxsize=4096)
def _chunk(chunk_id: str, text: str, version: str | None) -> Chunk:
    norm = _normalise(text)
    units: list[Unit] = []
    clauses: list[Unit] = []
    header: list[str] | None = None
    header_scopes: list[frozenset[str]] = []
    in_fence = False
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not line:
            continue
        if in_fence:
            units.append(_unit(line))
            continue
        if line.startswith("|") or (line.count("|") >= 2 and not line.startswith(("-", "*"))):
            if _is_separator(line):
                continue
            cells = _table_cells(line)
            if header is None:
                header = cells
                header_scopes = [_versions_in(_normalise(h)) for h in cells]  # "1.6", "Now (2.0)"
                continue
            label = cells[0] if cells else ""
            scoped = any(header_scopes[1:])
            units.append(_unit(" ".join(cells), frozenset().union(*header_scopes) if scoped else frozenset(), row=True))
            for j, cell in enumerate(cells[1:], start=1):
                head = header[j] if j < len(header) else ""
                scope = header_scopes[j] if j < len(header_scopes) else frozenset()
                negative = bool(re.match(r"(?i)(?:no|none|not\b.*|never|n/a|-|—)\s*(?:\(.*)?$", cell.strip()))
                cell_unit = _unit(f"{header[0]} {label} {head} {cell}", scope, value=f"{head} {cell}",
                                  negated=True if negative else None, cell=cell)
                units.append(cell_unit)
                clauses.append(cell_unit)
            continue
        header = None
        if re.match(r"^#{1,6}\s", line):
            units.append(_unit(re.sub(r"^#{1,6}\s+", "", line)))
            continue
        prose = _prose_units(line)
        for index, sentence in enumerate(prose):
            units.append(_unit(sentence))
            if sentence.endswith("?"):
                # a question asserts nothing; read it with a short answer that follows ("Not in 2.0.")
                answer = prose[index + 1] if index + 1 < len(prose) else ""
                reply = re.match(r"(?i)(yes|no|not)\b", answer)
                if reply:
                    clauses.append(_unit(f"{sentence} {answer}", negated=reply.group(1).lower() != "yes"))
                continue
            clauses.extend(_unit(p) for p in _polarity_parts(sentence))
    quantities, _ = _quantities(norm)
    versions = _versions_in(norm) | ({version} if version else frozenset())
    return Chunk(chunk_id, version, re.sub(r"\s+", " ", norm.replace("`", "").lower()),
                 frozenset(_words(norm)), tuple(quantities), tuple(units), tuple(clauses), frozenset(versions))


def _chunks(inputs: Mapping[str, Any]) -> list[Chunk]:
    return [_chunk(str(c["chunk_id"]), str(c.get("text") or ""), str(c["version"]) if c.get("version") else None)
            for c in inputs.get("chunks") or []]
