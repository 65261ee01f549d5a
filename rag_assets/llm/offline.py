"""The offline provider: deterministic heuristics, no network, no key.

Each template carries its own offline implementation; this client only runs it and labels every
result ``provider=offline`` so nobody mistakes a heuristic for a model's judgment.

Its answers are cached like a model's, so an unchanged re-run computes nothing (the heuristics read
every chunk's text, most of an offline evaluation's time). The key holds what a model's key holds
plus what the heuristics read and a model does not: the call's inputs, and the version of the code
that computes the answer, a hash of the package's source (any change to a heuristic or a helper it
calls misses). They are written to the cache together at the end of a run: a crash only costs
recomputing them, and a transaction per answer would cost more than the answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import rag_assets
from rag_assets.llm.cache import DeferredWrites, LLMCache, cache_key
from rag_assets.llm.client import LLMClient, Reply, Request
from rag_assets.llm.results import OFFLINE, LLMCall, LLMResult


@cache
def code_version() -> str:
    """A hash of every Python source of the package, by path: the heuristics' version."""
    root = Path(rag_assets.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class OfflineClient(LLMClient):
    provider = OFFLINE
    #: the heuristics' version, part of the judge configuration: raised when their scores change (v2: no negation
    #: rule, question-given names, focus in context precision; v3: spaced thousands, declines that state something
    #: are claims, names held by any word, changed values only against a sentence that gives numbers; v4: a clock
    #: time is one number whatever its notation, "10 PM" is "22:00"; an identifier's parts are words), so that a
    #: calibration or a regression baseline made with older scores is not taken for this judge's
    #: (tests/scoring/test_offline_version.py pins its outputs)
    model = "offline-heuristics-v4"

    def run(self, calls: Sequence[LLMCall], cache: LLMCache | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[LLMResult]:
        if cache is None:
            return super().run(calls, None, progress)
        deferred = DeferredWrites(cache)
        results = super().run(calls, deferred, progress)
        deferred.flush()
        return results

    def _request(self, call: LLMCall) -> Request:
        template = call.template
        prompt = template.prompt(call.inputs, shared=False)
        params = {"code": code_version(), "inputs": call.inputs}
        return Request(call, prompt, cache_key(self.provider, self.model, template.ref, prompt.system, prompt.user,
                                               params))

    async def _ask(self, request: Request, messages: list[dict[str, Any]]) -> Reply:
        answer = request.template.offline(request.call.inputs)
        text = json.dumps(answer)
        prompt_chars = len(request.system) + sum(len(str(m["content"])) for m in messages)
        return Reply(answer=answer, raw_text=text, input_tokens=prompt_chars // 4,
                     output_tokens=len(text) // 4, cost_usd=0.0)
