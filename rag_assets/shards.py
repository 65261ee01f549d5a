"""Split a run's work into shards that run as separate steps (and so on separate workers).

A shard is a contiguous slice of an ordered work list (golden items, generation tasks). The slice
is a pure function of the list and the shard size, so the plan step can hand shards out as small
descriptors and every shard step reads its own slice. What a shard has paid for survives it: every
LLM answer is kept in the persistent call cache as it arrives, so a re-run of a failed or killed
run pays only for the calls no shard finished.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    start: int
    stop: int

    @property
    def key(self) -> str:
        """A Dagster mapping key that sorts in shard order in the UI."""
        return f"shard_{self.index:04d}"

    def take(self, work: Sequence[T]) -> list[T]:
        return list(work[self.start:self.stop])


def plan_shards(total: int, shard_size: int) -> list[Shard]:
    """Shards of at most ``shard_size`` items covering ``total``; always at least one (maybe empty),
    so the step that merges the shards runs even when there is no work."""
    if shard_size < 1:
        raise ValueError(f"shard_size must be at least 1, got {shard_size}")
    count = max(1, math.ceil(total / shard_size))
    return [Shard(i, count, i * shard_size, min(total, (i + 1) * shard_size)) for i in range(count)]
