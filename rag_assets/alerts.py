"""Alerts for failed runs: a clear record in the store, and optionally a webhook POST.

Delivery never raises: an unreachable webhook is noted on the alert, not a second failure.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Alert:
    run_id: str
    job: str
    partition: str | None
    summary: str
    errors: tuple[str, ...]
    created_at: str

    @property
    def message(self) -> str:
        where = f" for corpus version {self.partition}" if self.partition else ""
        first = self.errors[0].splitlines()[0] if self.errors else self.summary
        return f"rag_assets: run {self.run_id} of {self.job}{where} failed: {first}"


def failure_alert(run_id: str, job: str, partition: str | None, summary: str, errors: Sequence[str]) -> Alert:
    return Alert(run_id, job, partition, summary, tuple(e[:2000] for e in errors),
                 dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))


def deliver(alert: Alert, webhook: str | None, timeout: float = 5.0) -> str:
    """POST the alert as JSON (``text`` for chat webhooks, plus every field); returns what happened."""
    if not webhook:
        return "recorded (no webhook configured)"
    body = json.dumps({"text": alert.message, **asdict(alert)}).encode("utf-8")
    request = urllib.request.Request(webhook, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return f"recorded and posted (HTTP {response.status})"
    except (urllib.error.URLError, OSError) as exc:
        return f"recorded; webhook failed: {getattr(exc, 'reason', exc)}"
