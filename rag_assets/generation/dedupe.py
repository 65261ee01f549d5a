"""Near-duplicate questions: Jaccard similarity of content-word sets at or above a threshold.

Two questions that ask for the same thing in slightly different words ("What is the maximum
file size in version 2.0?" / "In version 2.0, what is the maximum file size?") share nearly all
content words; 0.8 keeps questions that differ in one meaningful word out of five. An inverted
index limits comparisons to questions that share a word.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from rag_assets.text.tokens import content_words, jaccard


class NearDuplicateFilter:
    def __init__(self, threshold: float, existing: Iterable[str] = ()) -> None:
        self.threshold = threshold
        self._kept: list[tuple[str, frozenset[str]]] = []
        self._index: dict[str, list[int]] = defaultdict(list)
        for question in existing:
            self._keep(question)

    def _keep(self, question: str) -> None:
        words = frozenset(content_words(question))
        for word in words:
            self._index[word].append(len(self._kept))
        self._kept.append((question, words))

    def duplicate_of(self, question: str) -> str | None:
        """The kept question this one nearly repeats, or None (and then it is kept)."""
        words = frozenset(content_words(question))
        for index in sorted({i for word in words for i in self._index[word]}):
            kept, kept_words = self._kept[index]
            if jaccard(words, kept_words) >= self.threshold:
                return kept
        self._keep(question)
        return None
