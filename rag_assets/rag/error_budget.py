"""The error budget of a RAG run: the share of items the system failed on, and what went wrong.

A run where the system failed on most items still *finishes* (every item has its error record),
which is why pinning alone cannot gate it: this budget is what stops a broken system from being
scored as if it had answered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.rag.models import RagResponse
from rag_assets.ranges import share

DEFAULT_MAX_ERROR_RATE = 0.05


@dataclass(frozen=True)
class ErrorKind:
    kind: str
    items: int
    example_item: str
    example: str


@dataclass(frozen=True)
class ErrorBudget:
    items: int
    errors: int
    max_error_rate: float
    kinds: tuple[ErrorKind, ...]  # most frequent first

    @property
    def error_rate(self) -> float:
        return self.errors / self.items if self.items else 0.0

    @property
    def passed(self) -> bool:
        return self.error_rate <= self.max_error_rate

    def describe(self, top: int = 3) -> str:
        """One line: the rate against the budget, then the top kinds with one example each."""
        head = (f"{self.errors} of {self.items} items errored ({self.error_rate:.1%}, "
                f"budget {self.max_error_rate:.1%})")
        shown = [f"{k.kind} x{k.items}, e.g. {k.example_item}: {k.example}" for k in self.kinds[:top]]
        return head + ("; " + "; ".join(shown) if shown else "")


def error_budget(responses: Sequence[RagResponse], max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> ErrorBudget:
    """The budget of one run; ``max_error_rate`` must lie in [0, 1]."""
    share("max_error_rate", max_error_rate, DEFAULT_MAX_ERROR_RATE)
    failed = [r for r in responses if not r.ok]
    counts = Counter(r.error_kind or "unknown" for r in failed)
    first = {}
    for response in failed:
        first.setdefault(response.error_kind or "unknown", response)
    kinds = tuple(ErrorKind(kind, n, first[kind].item_id, first[kind].error or "")
                  for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return ErrorBudget(len(responses), len(failed), max_error_rate, kinds)
