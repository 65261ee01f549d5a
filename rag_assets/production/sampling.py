"""A day's sample of production queries to score.

Scoring every served query costs LLM calls, so a fixed-size sample is scored per day. The sample
must be reproducible (re-running a day re-scores the same queries, so results can be compared and
cached) yet differ between days (so no query is always or never looked at). Hence the seed is the
day itself, and records are ordered by ``query_id`` first so file order and file names do not matter.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import date

from rag_assets.corpus.models import sha256_hex
from rag_assets.production.logs import ProductionQuery


def day_seed(day: date) -> int:
    """The sampling seed of a day: sha256 of its ISO date, as an integer."""
    return int(sha256_hex(day.isoformat()), 16)


def sample_day(records: Iterable[ProductionQuery], day: date, size: int) -> list[ProductionQuery]:
    """Up to ``size`` records drawn without replacement, in query_id order; all of them when fewer."""
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    ordered = sorted(records, key=lambda record: record.query_id)
    if len(ordered) <= size:
        return ordered
    chosen = random.Random(day_seed(day)).sample(range(len(ordered)), size)
    return [ordered[i] for i in sorted(chosen)]
