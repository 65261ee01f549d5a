"""Many calls through a provider's batch API (Anthropic's Message Batches: half the price, no rate
limits to juggle, answers within 24 hours), resumable after a crash.

A request's ``custom_id`` is its cache key: a hash of everything that shapes the answer, so the
same request has the same name in every run and a batch's requests are fingerprinted one by one.
The batch id and its custom_ids are written to the journal (the project store) right after the
submit and before any polling; a re-run whose cache misses are in a pending batch polls that batch
instead of paying for them again. Whatever a batch cannot answer (errored, expired, canceled, a
batch the provider no longer knows, a failed submit) comes back as a reason instead of a reply,
and the client asks that call directly; a submit refused for the key (401) stops the submits and
the polls (the batches stay pending in the journal), and the client then sends nothing (its calls
are recorded as not sent).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rag_assets.errors import BatchNotFinished
from rag_assets.llm.client import ApiCallError, Reply

PENDING, ENDED, LOST = "pending", "ended", "lost"


@dataclass(frozen=True)
class BatchSettings:
    """When to batch, how to split, and how patiently to poll (seconds)."""

    min_calls: int = 50  # fewer cache misses than this go direct: a batch takes minutes at best
    max_requests: int = 100_000  # the Message Batches API's limit per batch
    max_bytes: int = 200_000_000  # under its 256 MB limit per batch, with room for the envelope
    poll_seconds: float = 30.0  # the first wait; each next one doubles...
    max_poll_seconds: float = 600.0  # ...up to this
    max_wait_seconds: float = 26 * 3600.0  # a batch ends within 24 hours (unanswered requests expire)

    def __post_init__(self) -> None:
        if self.min_calls < 1 or self.max_requests < 1 or self.max_bytes < 1:
            raise ValueError("batch min_calls, max_requests and max_bytes must be at least 1")
        if not 0 < self.poll_seconds <= self.max_poll_seconds:
            raise ValueError("batch poll_seconds must be positive and at most max_poll_seconds")
        if self.max_wait_seconds < 0:
            raise ValueError("batch max_wait_seconds must not be negative")


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch: the API parameters, and which call it answers (for the journal)."""

    custom_id: str
    call_key: str
    template_ref: str
    params: dict[str, Any]


#: a batch's answer to one request: the reply, or why there is none
BatchOutcome = Reply | str


class BatchJournal(Protocol):
    """Where submitted batches are remembered across processes (no secrets: ids and hashes only)."""

    def pending(self, provider: str, custom_ids: Collection[str]) -> dict[str, set[str]]:
        """Pending batches holding any of ``custom_ids``: batch id -> those of them it holds."""

    def record(self, batch_id: str, provider: str, model: str, requests: Sequence[BatchRequest]) -> None:
        """Remember a submitted batch as pending, with its custom_id -> call mapping."""

    def finish(self, batch_id: str, status: str) -> None:
        """Mark a batch ``ended`` (its answers are stored) or ``lost`` (the provider does not know it)."""


class BatchApi(Protocol):
    """The three operations a provider's batch API offers."""

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Create a batch; its id. Raises ApiCallError."""

    async def ended(self, batch_id: str) -> bool | None:
        """Whether processing ended; None when the provider does not know the batch. Raises ApiCallError."""

    def results(self, batch_id: str) -> AsyncIterator[tuple[str, BatchOutcome]]:
        """(custom_id, outcome) for every request of an ended batch, in any order."""


def split(requests: Sequence[BatchRequest], settings: BatchSettings) -> Iterator[list[BatchRequest]]:
    """Consecutive batches within the API's request-count and size limits."""
    chunk: list[BatchRequest] = []
    size = 0
    for request in requests:
        request_bytes = len(json.dumps(request.params, ensure_ascii=False).encode()) + len(request.custom_id) + 32
        if chunk and (len(chunk) == settings.max_requests or size + request_bytes > settings.max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append(request)
        size += request_bytes
    if chunk:
        yield chunk


class BatchRun:
    """One run's batch work: submit or resume, wait, collect; ``finish`` once the answers are stored."""

    def __init__(self, api: BatchApi, journal: BatchJournal, settings: BatchSettings, provider: str,
                 model: str) -> None:
        self.api, self.journal, self.settings = api, journal, settings
        self.provider, self.model = provider, model
        self.collected: list[str] = []

    async def answer(self, requests: Sequence[BatchRequest]) -> dict[str, BatchOutcome]:
        """An outcome for every request, by custom_id. Raises BatchNotFinished (nothing is lost:
        the batches stay pending in the journal) when a batch is not done by the deadline."""
        wanted = {r.custom_id for r in requests}
        batches = self.journal.pending(self.provider, wanted)
        resumed = set().union(*batches.values())
        outcomes: dict[str, BatchOutcome] = {}
        refused = None
        for chunk in split([r for r in requests if r.custom_id not in resumed], self.settings):
            if refused is not None:  # the key was refused: no further batch is submitted
                outcomes.update((r.custom_id, refused) for r in chunk)
                continue
            try:
                batch_id = await self.api.submit(chunk)
            except ApiCallError as exc:
                reason = f"the batch submit failed: {exc}"
                outcomes.update((r.custom_id, reason) for r in chunk)
                refused = reason if exc.refused is not None else None
                continue
            self.journal.record(batch_id, self.provider, self.model, chunk)
            batches[batch_id] = {r.custom_id for r in chunk}
        if refused is not None:  # nor is one polled: they stay pending in the journal, for a run with a valid key
            outcomes.update((c, refused) for custom_ids in batches.values() for c in custom_ids)
            return outcomes
        for found in await asyncio.gather(*(self._collect(b, ids) for b, ids in batches.items())):
            outcomes.update(found)
        return outcomes

    def finish(self) -> None:
        """Mark the collected batches ended: called after their answers are in the cache, so a crash
        before that resumes the batch (its results stay downloadable) instead of paying again."""
        for batch_id in self.collected:
            self.journal.finish(batch_id, ENDED)

    async def _collect(self, batch_id: str, custom_ids: set[str]) -> dict[str, BatchOutcome]:
        found: dict[str, BatchOutcome] = {}
        try:
            if not await self._wait(batch_id):
                self.journal.finish(batch_id, LOST)
                gone = f"batch {batch_id} is unknown to the provider or its results are gone"
                return dict.fromkeys(custom_ids, gone)
            async for custom_id, outcome in self.api.results(batch_id):
                if custom_id in custom_ids:
                    found[custom_id] = outcome
        except ApiCallError as exc:
            raise BatchNotFinished(f"{self.provider} batch {batch_id} could not be polled or read ({exc}); it stays "
                                   "pending in the store and the next run with the same calls resumes it") from exc
        self.collected.append(batch_id)
        return {c: found.get(c, f"batch {batch_id} has no result for this request") for c in custom_ids}

    async def _wait(self, batch_id: str) -> bool:
        """Poll with exponential backoff until the batch ends (True) or turns out unknown (False)."""
        deadline = time.monotonic() + self.settings.max_wait_seconds
        delay = self.settings.poll_seconds
        while (ended := await self.api.ended(batch_id)) is False:
            if time.monotonic() + delay > deadline:
                raise BatchNotFinished(
                    f"{self.provider} batch {batch_id} has not ended after {self.settings.max_wait_seconds:g}s; it "
                    "stays pending in the store and the next run with the same calls resumes polling it")
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.settings.max_poll_seconds)
        return ended is True
