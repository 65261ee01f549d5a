"""The persistent call cache's key and interface.

The key covers everything that can change an answer: provider, model, template id and version,
the full rendered system and user prompts, and the sampling parameters and output schema. A
re-run with unchanged inputs therefore makes zero calls, while a new model or template version
misses. Only valid answers are cached: a failure is retried on the next run, not remembered.

A paid answer is written as soon as it arrives (a crash must not pay for it twice); answers that
cost nothing to recompute go through ``DeferredWrites``, written together at the end of a run, as a
write transaction per answer would cost more than the answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rag_assets.corpus.models import sha256_hex


@dataclass(frozen=True)
class CachedAnswer:
    output: dict[str, Any]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class LLMCache(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        """The cached answers among ``keys``, by key (a run looks all of its calls up at once)."""
        ...

    def put(self, key: str, *, provider: str, model: str, template_ref: str, answer: CachedAnswer) -> None:
        """Write one answer; it replaces the key's answer cached already (one that left something out: see
        ``PromptTemplate.uncovered``)."""
        ...

    def put_many(self, entries: Sequence[CacheEntry]) -> None:
        """Write every entry (a key cached already keeps its answer)."""
        ...


@dataclass(frozen=True)
class CacheEntry:
    key: str
    provider: str
    model: str
    template_ref: str
    answer: CachedAnswer


class DeferredWrites:
    """``cache`` with its writes held until ``flush``, which writes them all at once."""

    def __init__(self, cache: LLMCache) -> None:
        self._cache = cache
        self._entries: list[CacheEntry] = []

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        return self._cache.get_many(keys)

    def put(self, key: str, *, provider: str, model: str, template_ref: str, answer: CachedAnswer) -> None:
        self._entries.append(CacheEntry(key, provider, model, template_ref, answer))

    def put_many(self, entries: Sequence[CacheEntry]) -> None:
        self._entries.extend(entries)

    def flush(self) -> None:
        entries, self._entries = self._entries, []
        if entries:
            self._cache.put_many(entries)


def cache_key(provider: str, model: str, template_ref: str, system: str, user: str, params: dict[str, Any]) -> str:
    payload = json.dumps([provider, model, template_ref, system, user, params], sort_keys=True, ensure_ascii=False)
    return sha256_hex(payload)
