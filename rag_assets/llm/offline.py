"""The offline provider: deterministic heuristics, no network, no key.

Each template carries its own offline implementation; this client only runs it and labels every
result ``provider=offline`` so nobody mistakes a heuristic for a model's judgment. Offline
answers are not cached: recomputing them is cheaper than a database round trip.
"""

from __future__ import annotations

import json
from typing import Any

from rag_assets.llm.client import LLMClient, Reply, Request
from rag_assets.llm.results import OFFLINE


class OfflineClient(LLMClient):
    provider = OFFLINE
    model = "offline-heuristics-v1"

    def uses_cache(self) -> bool:
        return False

    async def _ask(self, request: Request, messages: list[dict[str, Any]]) -> Reply:
        answer = request.template.offline(request.call.inputs)
        text = json.dumps(answer)
        prompt_chars = len(request.system) + sum(len(str(m["content"])) for m in messages)
        return Reply(answer=answer, raw_text=text, input_tokens=prompt_chars // 4,
                     output_tokens=len(text) // 4, cost_usd=0.0)
