"""The LLM call cache in the store (implements ``rag_assets.llm.cache.LLMCache``).

A paid answer is written as soon as it arrives (``put``), so a crashed run resumes without paying
twice; answers that are free to recompute are written many at once (``put_many``). A run looks its
calls up with one SELECT per ``IN_BATCH`` keys.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from rag_assets.llm.cache import CacheEntry, CachedAnswer
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import LLMCacheRow

CACHE = LLMCacheRow.__table__


class SqlLLMCache:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        """One SELECT per ``IN_BATCH`` distinct keys (a shard's calls in one), not one per key."""
        columns = (CACHE.c.cache_key, CACHE.c.output_json, CACHE.c.input_tokens, CACHE.c.output_tokens,
                   CACHE.c.cost_usd)
        found: dict[str, CachedAnswer] = {}
        with self.engine.connect() as conn:
            for batch in batched(dict.fromkeys(keys)):
                for key, output, input_tokens, output_tokens, cost in conn.execute(
                        select(*columns).where(CACHE.c.cache_key.in_(batch))):
                    found[key] = CachedAnswer(json.loads(output), input_tokens, output_tokens, cost)
        return found

    def put(self, key: str, *, provider: str, model: str, template_ref: str, answer: CachedAnswer) -> None:
        """Replaces the key's answer: a key is only put again when its cached answer left something out."""
        row = _row(CacheEntry(key, provider, model, template_ref, answer))
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(CACHE.delete().where(CACHE.c.cache_key == key))
                conn.execute(CACHE.insert().values(**row))
        except IntegrityError:
            pass  # another worker cached an answer to the same call in between; it was checked as this one was

    def put_many(self, entries: Sequence[CacheEntry]) -> None:
        """One write transaction per ``IN_BATCH`` entries; keys cached already are left as they are."""
        rows = list({e.key: _row(e) for e in entries}.values())
        for batch in batched(rows):
            try:
                with write_transaction(self.engine) as conn:
                    cached = set(conn.execute(select(CACHE.c.cache_key).where(
                        CACHE.c.cache_key.in_([r["cache_key"] for r in batch]))).scalars())
                    new = [r for r in batch if r["cache_key"] not in cached]
                    if new:
                        conn.execute(CACHE.insert(), new)
            except IntegrityError:  # a concurrent writer cached some of them in between: one by one
                for row in batch:
                    self._insert(row)

    def _insert(self, row: dict[str, Any]) -> None:
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(CACHE.insert().values(**row))
        except IntegrityError:
            pass  # another worker cached the same answer first; both are valid


def _row(entry: CacheEntry) -> dict[str, Any]:
    answer = entry.answer
    return {"cache_key": entry.key, "provider": entry.provider, "model": entry.model,
            "template_ref": entry.template_ref, "output_json": json.dumps(answer.output, ensure_ascii=False),
            "input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens, "cost_usd": answer.cost_usd}
