"""Lexical support: how much of a statement one sentence of the retrieved chunks states.

The chunks at hand are cut into sentences (see ``text.sentences``); each content stem weighs its inverse
document frequency over those sentences, ``ln((N + 1) / (df + 0.5))``, so a stem the chunks repeat
everywhere (the topic) counts less than one that pins a fact; a stem found nowhere weighs as one found once. A
statement's support by a sentence is the weight of its stems that the sentence holds over the weight of
all its stems. Support is read from the best single sentence, not from the chunks' pooled vocabulary: a
statement whose words are scattered over unrelated sentences is not supported.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_assets.scoring.offline_judge.text import numbers_stated, sentences, stems

#: a statement is supported when one sentence holds more than half of its weight (a fixed, round cut-off)
SUPPORTED = 0.5


@dataclass(frozen=True)
class Sentence:
    chunk_id: str
    text: str
    stems: frozenset[str]
    numbers: frozenset[str]


class Evidence:
    """The retrieved chunks as sentences, with the IDF weights of their stems."""

    def __init__(self, chunks: Sequence[Mapping[str, Any]]):
        self.chunk_ids = [str(c["chunk_id"]) for c in chunks]
        self.sentences = [Sentence(str(c["chunk_id"]), s, frozenset(stems(s)), numbers_stated(s))
                          for c in chunks for s in sentences(str(c.get("text") or ""))]
        self._df = Counter(w for s in self.sentences for w in s.stems)
        self.stems = frozenset(self._df)
        self.numbers = frozenset(n for s in self.sentences for n in s.numbers)

    def weight(self, stem: str) -> float:
        """A stem the chunks never use weighs as the rarest one they do (a document frequency of one):
        absence says nothing of a word's importance, and at zero over one short chunk a single stray word
        ("yes", "oh") would outweigh five of the chunk's words and unsupport a sentence quoted verbatim."""
        return math.log((len(self.sentences) + 1) / (max(self._df[stem], 1) + 0.5))

    def coverage(self, wanted: Iterable[str], held: frozenset[str]) -> float:
        """The weighted share of ``wanted`` stems that ``held`` contains (0 when nothing is wanted). Summed with
        ``math.fsum``, exactly rounded: a plain sum over a set depends on its order, which the hash seed sets, and
        a tie between two sentences broke differently from one process to the next."""
        wanted = set(wanted)
        total = math.fsum(self.weight(w) for w in wanted)
        return math.fsum(self.weight(w) for w in wanted if w in held) / total if total else 0.0

    def best(self, statement: str, chunk_id: str | None = None) -> tuple[float, list[Sentence]]:
        """The highest support any one sentence (of one chunk, if named) gives the statement, and the
        sentences that give it, in chunk order."""
        wanted = stems(statement)
        scored = [(self.coverage(wanted, s.stems), s) for s in self.sentences
                  if chunk_id is None or s.chunk_id == chunk_id]
        top = max((score for score, _ in scored), default=0.0)
        return top, [s for score, s in scored if top > 0 and score >= top - 1e-9]
