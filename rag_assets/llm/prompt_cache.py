"""What a run's calls share, for the provider's prompt cache: breakpoints, the send order, the estimate.

A prompt (``rag_assets.llm.templates.Prompt``) has a breakpoint after its static part (tools and
instructions) and, when it has one that another call of the run shares, after its item context (a
context no other call reads would only pay the write premium: 1.25 times its input price). The
provider writes a prefix to its cache the first time it sees it and reads it after, but only once the
first answer has begun: calls sent at the same moment all pay to write. So the first call of each
prefix goes alone and the calls sharing it wait for its answer (``Warmup``). The pre-flight estimate
prices each prefix the way the provider bills it: written once, read after, and billed as plain input
when shorter than the minimum it caches.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from rag_assets.corpus.models import sha256_hex
from rag_assets.llm.templates import Prompt

#: the project's estimate, where the provider's token counting is not used
CHARS_PER_TOKEN = 4


def _static(prompt: Prompt) -> str:
    return json.dumps([prompt.tools, prompt.instructions], ensure_ascii=False)


def _context_key(prompt: Prompt) -> str:
    return sha256_hex(json.dumps([_static(prompt), prompt.context], ensure_ascii=False))


def breakpoints(prompt: Prompt) -> list[tuple[str, int]]:
    """(prefix key, characters up to it) at each breakpoint, in order."""
    static = _static(prompt)
    points = [(sha256_hex(static), len(static))]
    if prompt.context is not None and prompt.cache_context:
        points.append((_context_key(prompt), len(static) + len(prompt.context)))
    return points


def lone_contexts(prompts: Iterable[Prompt]) -> set[str]:
    """The item contexts (by key) that only one of ``prompts`` has: not worth a breakpoint. The static part
    keeps its own, as the calls of later runs and shards read it too."""
    counts = Counter(_context_key(p) for p in prompts if p.context is not None)
    return {key for key, count in counts.items() if count == 1}


def without_lone_context(prompt: Prompt, lone: set[str]) -> Prompt:
    """``prompt`` without the breakpoint after its context when that context is in ``lone``."""
    if prompt.context is None or _context_key(prompt) not in lone:
        return prompt
    return replace(prompt, cache_context=False)


def prompt_chars(prompt: Prompt) -> int:
    return len(_static(prompt)) + len(prompt.context or "") + len(prompt.user)


@dataclass(frozen=True)
class InputSplit:
    """Input tokens as the provider bills them: uncached, written to the cache, read from it."""

    fresh: int = 0
    written: int = 0
    read: int = 0

    @property
    def total(self) -> int:
        return self.fresh + self.written + self.read


def split_input(prompts: Iterable[tuple[Prompt, float]], minimum: int | None) -> InputSplit:
    """The input tokens of ``prompts`` (each with its tokens per character) sent in order; ``minimum``: the
    shortest prefix the provider caches, None when prompt caching is off."""
    seen: set[str] = set()
    fresh = written = read = 0
    for prompt, per_char in prompts:
        done = 0
        for key, chars in breakpoints(prompt) if minimum is not None else []:
            tokens = round(chars * per_char)
            if tokens < minimum:
                continue
            if key in seen:
                read += tokens - done
            else:
                written += tokens - done
                seen.add(key)
            done = tokens
        fresh += round(prompt_chars(prompt) * per_char) - done
    return InputSplit(fresh, written, read)


class Warmup:
    """The first call of each cacheable prefix (``minimum`` tokens or more by the project's estimate) is sent
    alone; the others sharing it wait until it is answered."""

    def __init__(self, prompts: Mapping[str, Prompt], minimum: int) -> None:
        self._points = {key: [point for point, chars in breakpoints(prompt) if chars // CHARS_PER_TOKEN >= minimum]
                        for key, prompt in prompts.items()}
        self._first: dict[str, str] = {}
        for key, points in self._points.items():
            for point in points:
                self._first.setdefault(point, key)
        self._done = {point: asyncio.Event() for point in self._first}

    async def wait(self, key: str) -> None:
        for point in self._points.get(key, []):
            if self._first[point] != key:
                await self._done[point].wait()

    def release(self, key: str) -> None:
        for point in self._points.get(key, []):
            if self._first[point] == key:
                self._done[point].set()

