"""The persistent call cache's key and interface.

The key covers everything that can change an answer: provider, model, template id and version,
the full rendered system and user prompts, and the sampling parameters and output schema. A
re-run with unchanged inputs therefore makes zero calls, while a new model or template version
misses. Only valid answers are cached: a failure is retried on the next run, not remembered.
"""

from __future__ import annotations

import json
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
    def get(self, key: str) -> CachedAnswer | None: ...

    def put(self, key: str, *, provider: str, model: str, template_ref: str, answer: CachedAnswer) -> None: ...


def cache_key(provider: str, model: str, template_ref: str, system: str, user: str, params: dict[str, Any]) -> str:
    payload = json.dumps([provider, model, template_ref, system, user, params], sort_keys=True, ensure_ascii=False)
    return sha256_hex(payload)
