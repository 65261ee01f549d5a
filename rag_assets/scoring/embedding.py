"""Embedders for answer relevance: a local default that needs no download, and an optional model.

The default hashes word unigrams and bigrams (light suffix stripping) and character trigrams into
4,096 dimensions with sublinear term frequency, L2-normalised: deterministic, fast, and good at
"do these two questions ask about the same things". ``sentence-transformers:<model>`` uses that
package (the ``embeddings`` extra) when a user wants semantic similarity.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import cache
from typing import Protocol

import numpy as np

from rag_assets.errors import ConfigError
from rag_assets.text.tokens import STOPWORDS, tokenize

DIMENSIONS = 4096
_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")


class Embedder(Protocol):
    name: str
    semantic: bool  # similarity of meaning, not of words: only then does answer relevance use it

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text."""


@cache
def _slot(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=4).digest(), "little") % DIMENSIONS


def _stem(word: str) -> str:
    return _SUFFIX.sub("", word) if len(word) > 4 else word


class HashingEmbedder:
    name = "hashing-v1"
    semantic = False

    def _features(self, text: str) -> list[str]:
        words = [_stem(w) for w in tokenize(text) if w not in STOPWORDS]
        grams = [f"w:{w}" for w in words] + [f"b:{a}_{b}" for a, b in zip(words, words[1:])]
        for word in words:
            padded = f"#{word}#"
            grams.extend(f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2))
        return grams

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), DIMENSIONS), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                weight = 1.0 if feature.startswith("c:") else 3.0
                matrix[row, _slot(feature)] += weight
        matrix = np.log1p(matrix)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class SentenceTransformerEmbedder:
    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError("embedder 'sentence-transformers:…' needs the embeddings extra "
                              "(pip install 'rag_assets[embeddings]')") from exc
        self.name = f"sentence-transformers:{model}"
        self.semantic = True
        self._model = SentenceTransformer(model)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float64)


def make_embedder(spec: str = "hashing") -> Embedder:
    if spec in ("hashing", HashingEmbedder.name):
        return HashingEmbedder()
    if spec.startswith("sentence-transformers:"):
        return SentenceTransformerEmbedder(spec.split(":", 1)[1])
    raise ConfigError(f"embedder must be 'hashing' or 'sentence-transformers:<model>', got {spec!r}")


def cosine(embedder: Embedder, text: str, others: Sequence[str]) -> np.ndarray:
    vectors = embedder.embed([text, *others])
    return vectors[1:] @ vectors[0]
