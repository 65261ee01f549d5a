"""A client-side bound on requests per minute, shared by every client of one process.

The Dagster pool ``anthropic`` bounds how many steps talk to the API at once across all processes
and workers; this pacer bounds how fast each of those steps sends. Together they keep a deployment
under the account's limit: ``pool limit x requests_per_minute <= account RPM`` (README, "Production
deployment").

Requests are spaced evenly (one every ``60 / requests_per_minute`` seconds) rather than allowed
in bursts: the Messages API may enforce a per-minute limit over shorter windows, so a burst that
fits the minute can still be refused. A slot is reserved under a thread lock and waited for
asynchronously, so clients running in several threads or event loops of one process share one
schedule; the pacer is keyed by provider, model and rate because Anthropic limits each model apart.
"""

from __future__ import annotations

import asyncio
import threading
import time


class RequestPacer:
    """Hands out send times at least ``60 / requests_per_minute`` seconds apart."""

    def __init__(self, requests_per_minute: int) -> None:
        if requests_per_minute < 1:
            raise ValueError("requests_per_minute must be at least 1")
        self.requests_per_minute = requests_per_minute
        self.interval = 60.0 / requests_per_minute
        self._next_slot = 0.0
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Seconds to wait before the next request may be sent (its slot is taken now)."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.interval
        return slot - now

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


_PACERS: dict[tuple[str, str, int], RequestPacer] = {}
_PACERS_LOCK = threading.Lock()


def shared_pacer(provider: str, model: str, requests_per_minute: int) -> RequestPacer:
    """The one pacer of this process for a provider, model and rate (clients come and go per step
    and per call site; the limit belongs to the process)."""
    key = (provider, model, requests_per_minute)
    with _PACERS_LOCK:
        if key not in _PACERS:
            _PACERS[key] = RequestPacer(requests_per_minute)
        return _PACERS[key]
