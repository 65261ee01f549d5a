"""A spending cap for LLM calls: a gate on the pre-flight estimate, and a stop once the spend passes it.

A step has two limits: its run's (every step of one Dagster run together, in whatever process a
shard step runs) and its asset's (the steps of one asset in that run). Spend is recorded per paid
request in a ledger (the project store), tagged with the run id and the asset, so shard steps in
separate processes see what the others spent. Before each batch of calls (a step may run several: the
A/B comparison's answers and judge, one batch per judge probe) a step compares the batch's estimate with
what is left of both limits and fails without sending the batch when it does not fit (saying what the
step's earlier batches already sent); while a batch runs, it sends no new request once either limit is
spent (requests in flight still finish, so a step may pass its limit by what those cost). Every answer of
a cached call is in the LLM cache, so a re-run with a higher limit pays only for the calls still missing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol

from rag_assets.errors import RagAssetsError
from rag_assets.settings import MAX_COST_ENV

#: how to go on past the run's limit; ``HOW_TO_RAISE`` adds the asset's own, for an asset that has one
RUN_LIMIT = f"raise the run's limit with the llm resource's max_cost_usd (or {MAX_COST_ENV})"
HOW_TO_RAISE = f"{RUN_LIMIT}, or the asset's with max_cost_usd in its run config"


class BudgetExceeded(RagAssetsError):
    """A batch's estimate does not fit its step's budget (the batch was not sent), or the step's spend passed
    the budget (what was answered is in the LLM cache, unless the calls went without it)."""


@dataclass(frozen=True)
class CostEstimate:
    """What a step's calls will cost at most: cache hits excluded, every output at its maximum tokens."""

    calls: int  # requests to send (the cache misses)
    cache_hits: int
    input_tokens: int
    max_output_tokens: int
    cost_usd: float | None  # None when the model has no price
    batch: bool = False  # priced as Message Batches
    counted: bool = False  # input tokens counted by the provider's token counting endpoint

    def describe(self) -> str:
        cost = "unknown (no price for this model)" if self.cost_usd is None else f"at most ${self.cost_usd:.4f}"
        how = "counted by the provider" if self.counted else "estimated"
        batch = " at the batch price" if self.batch else ""
        return (f"{self.calls} calls ({self.cache_hits} more answered from the cache), ~{self.input_tokens:,} input "
                f"tokens ({how}), <= {self.max_output_tokens:,} output tokens, cost {cost}{batch}")


class SpendLedger(Protocol):
    """Where paid requests are tallied across processes (the store): dollars only, no content."""

    def add(self, run_id: str, scope: str, cost_usd: float) -> None:
        """Record what one request cost."""

    def spent(self, run_id: str, scope: str | None = None) -> float:
        """Dollars spent in a run, or by one scope (asset) of it."""


class MemoryLedger:
    """A ledger for one process (tests, the CLI, a client without a store)."""

    def __init__(self) -> None:
        self._rows: list[tuple[str, str, float]] = []
        self._lock = threading.Lock()

    def add(self, run_id: str, scope: str, cost_usd: float) -> None:
        with self._lock:
            self._rows.append((run_id, scope, cost_usd))

    def spent(self, run_id: str, scope: str | None = None) -> float:
        with self._lock:
            return sum(cost for run, where, cost in self._rows if run == run_id and scope in (None, where))


@dataclass(frozen=True)
class Budget:
    """The limits of one step: ``run_max_usd`` for its run, ``scope_max_usd`` for its asset (None: no limit)."""

    run_id: str
    scope: str
    run_max_usd: float | None = None
    scope_max_usd: float | None = None
    ledger: SpendLedger = field(default_factory=MemoryLedger)
    # what this step sent through this budget: one cost per request (the step's earlier batches)
    _paid: list[float] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("run_max_usd", "scope_max_usd"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"max_cost_usd must not be negative, got {value}")

    @property
    def limited(self) -> bool:
        return self.run_max_usd is not None or self.scope_max_usd is not None

    def _limits(self) -> list[tuple[str, float, float]]:
        """(name, limit, spent) of each limit that is set."""
        limits = []
        if self.run_max_usd is not None:
            limits.append((f"run {self.run_id}", self.run_max_usd, self.ledger.spent(self.run_id)))
        if self.scope_max_usd is not None:
            limits.append((self.scope, self.scope_max_usd, self.ledger.spent(self.run_id, self.scope)))
        return limits

    def check(self, estimate: CostEstimate) -> None:
        """Raise BudgetExceeded when the estimate of a batch does not fit what is left of a limit: the batch is
        not sent; the message says what the step's earlier batches sent, if any."""
        if not self.limited or estimate.calls == 0:
            return
        for name, limit, spent in self._limits():
            if estimate.cost_usd is None:
                raise BudgetExceeded(
                    f"the cost of {estimate.calls} calls cannot be estimated (no price for this model) and the budget "
                    f"of {name} is ${limit:.4f}; add the model to the llm resource's prices, or remove the limit")
            if estimate.cost_usd > limit - spent:
                raise BudgetExceeded(
                    f"the estimated cost ${estimate.cost_usd:.4f} of {name} ({estimate.describe()}) exceeds its budget: "
                    f"${limit:.4f}, of which ${spent:.4f} is spent; {self._not_sent(estimate.calls)}. To go ahead, "
                    f"{HOW_TO_RAISE}")

    def _not_sent(self, calls: int) -> str:
        if not self._paid:
            return "nothing was sent"
        return (f"these {calls} calls were not sent (this step's earlier calls already sent {len(self._paid)} "
                f"requests for ${sum(self._paid):.4f})")

    def record(self, cost_usd: float | None) -> None:
        """One request sent (its cost, if priced)."""
        self._paid.append(cost_usd or 0.0)
        if cost_usd:
            self.ledger.add(self.run_id, self.scope, cost_usd)

    def exhausted(self) -> str | None:
        """Why no new request may be sent (the spend passed a limit), else None."""
        for name, limit, spent in self._limits():
            if spent > limit:
                return f"{name} has spent ${spent:.4f} of its ${limit:.4f} budget"
        return None

    def stopped(self, answered: int, unsent: int, cached: bool = True) -> BudgetExceeded:
        """The error of a step that stopped sending: what was spent, what is kept (``cached``: the calls went
        through the LLM cache; the judge probe "repeat" does not), how to go on."""
        reason = self.exhausted() or "the budget is spent"
        if cached:
            return BudgetExceeded(
                f"stopped: {reason}. {answered} calls were answered and are kept in the LLM cache; {unsent} were not "
                f"sent. A re-run pays only for those: {HOW_TO_RAISE}")
        return BudgetExceeded(
            f"stopped: {reason}. {answered} calls were answered but not cached (a re-run sends them again); {unsent} "
            f"were not sent. To go on, {HOW_TO_RAISE}")
