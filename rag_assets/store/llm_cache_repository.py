"""The LLM call cache in the store (implements ``rag_assets.llm.cache.LLMCache``).

Each answer is written as soon as it arrives, so a crashed run resumes without paying twice.
"""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from rag_assets.llm.cache import CachedAnswer
from rag_assets.store.engine import write_transaction
from rag_assets.store.tables import LLMCacheRow

CACHE = LLMCacheRow.__table__


class SqlLLMCache:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, key: str) -> CachedAnswer | None:
        query = select(CACHE.c.output_json, CACHE.c.input_tokens, CACHE.c.output_tokens, CACHE.c.cost_usd).where(
            CACHE.c.cache_key == key)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else CachedAnswer(json.loads(row[0]), row[1], row[2], row[3])

    def put(self, key: str, *, provider: str, model: str, template_ref: str, answer: CachedAnswer) -> None:
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(CACHE.insert().values(
                    cache_key=key, provider=provider, model=model, template_ref=template_ref,
                    output_json=json.dumps(answer.output, ensure_ascii=False), input_tokens=answer.input_tokens,
                    output_tokens=answer.output_tokens, cost_usd=answer.cost_usd))
        except IntegrityError:
            pass  # another worker cached the same answer first; both are valid
