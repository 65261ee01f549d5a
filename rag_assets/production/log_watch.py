"""What the production log sensor remembers and what it asks for: pure decisions over its cursor.

The cursor keeps each log file's content hash and, per day in it, a digest of that day's records; a day whose
records changed waits in ``pending`` (with a digest of its changes, the run key) until its partition exists.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import date

from rag_assets.corpus.models import sha256_hex


@dataclass
class LogCursor:
    """file name -> {"sha": its hash, "days": {day: digest of the day's records in it}}; day -> pending digest."""

    files: dict[str, dict] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, raw: str | None) -> LogCursor:
        return cls(**json.loads(raw)) if raw else cls()

    def dump(self) -> str:
        return json.dumps({"files": self.files, "pending": self.pending})

    def changed(self, name: str, sha: str) -> bool:
        return self.files.get(name, {}).get("sha") != sha

    def record(self, name: str, sha: str, days: dict[str, str]) -> None:
        """File ``name`` now hashes to ``sha`` with these day digests: each day whose digest moved is pending, its
        digest chained with the file's so that two changes of a day before its run give one new run key."""
        before = self.files.get(name, {}).get("days", {})
        self.files[name] = {"sha": sha, "days": days}
        for day, digest in days.items():
            if before.get(day) != digest:
                self.pending[day] = sha256_hex(self.pending.get(day, "") + name + digest)[:16]


def ready_days(pending: Collection[str], first: str, last: str | None) -> list[str]:
    """The pending days that have a partition (``first`` to ``last``; None: no day has one yet)."""
    return [day for day in pending if first <= day and last is not None and day <= last]


@dataclass(frozen=True)
class DayPlan:
    """(day, run key) per run to request, and the days before the first partition, dropped."""

    requests: list[tuple[str, str]]
    too_early: list[str]


def _in_window(day: str, earlier: Collection[str], window: int) -> bool:
    """Whether one of the ``earlier`` days is among the ``window`` days before ``day`` (its drift baseline)."""
    today = date.fromisoformat(day)
    return any(0 < (today - date.fromisoformat(other)).days <= window for other in earlier)


def plan_days(cursor: LogCursor, first: str, last: str | None, scored: Collection[str],
              in_flight: Collection[str] = (), window: int = 0) -> DayPlan:
    """Take from ``cursor.pending`` every day that is before ``first`` (dropped), already ``scored`` with the
    records it has now (dropped), or has a partition (requested, run key = day + digest); later days wait. A day
    also waits while a day of its drift baseline (the ``window`` days before it) is still to be scored: pending, or
    ``in_flight`` (its run not ended), so that its baseline is those days' scores whatever order runs end in."""
    requests, too_early = [], []
    unsettled = set(in_flight)
    for day in sorted(cursor.pending):
        if day < first:
            too_early.append(day)
            del cursor.pending[day]
        elif day in scored:
            del cursor.pending[day]
        elif last is not None and day <= last:
            if not _in_window(day, unsettled, window):
                requests.append((day, f"{day}:{cursor.pending.pop(day)}"))
            unsettled.add(day)
    return DayPlan(requests, too_early)
