"""What an LLM call returns, and the per-asset tally of calls, cache hits, tokens and cost."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

OFFLINE = "offline"
ANTHROPIC = "anthropic"


@dataclass(frozen=True)
class LLMCall:
    """One unit of work: a template applied to inputs. ``key`` lets the caller map results back."""

    key: str
    template: Any  # PromptTemplate (kept loose to avoid an import cycle in type-only use)
    inputs: dict[str, Any]


@dataclass(frozen=True)
class LLMResult:
    """The outcome of one LLMCall. Exactly one of ``output`` and ``error`` is set.

    ``error_kind`` is ``api_error`` (the API failed after the SDK's retries) or ``parse_error``
    (the answer did not validate, or was cut off at the token limit, even after one repair attempt). A failed call is recorded as
    such; nobody substitutes a default answer for it. ``via_batch``: the first answer came through a
    provider batch (at the batch price); ``batch_fallback``: why a batch could not answer the call,
    which was then asked directly.
    """

    key: str
    provider: str
    model: str
    template_ref: str
    output: dict[str, Any] | None
    error: str | None = None
    error_kind: str | None = None
    cached: bool = False
    requests: int = 0
    retries: int = 0
    repaired: bool = False
    input_tokens: int = 0  # all of them, those written to and read from the provider's prompt cache included
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    prompt_cache_write_tokens: int = 0
    prompt_cache_read_tokens: int = 0
    latency_ms: float = 0.0
    via_batch: bool = False
    batch_fallback: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class LLMStats:
    """Counters an asset reports as metadata."""

    provider: str = OFFLINE
    model: str = OFFLINE
    calls: int = 0
    requests: int = 0
    sent: int = 0  # calls sent to the provider (at least one request): the cache misses not left unsent by a stop
    batched: int = 0
    batch_fallbacks: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    retries: int = 0
    repairs: int = 0
    api_errors: int = 0
    parse_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_cache_write_tokens: int = 0
    prompt_cache_read_tokens: int = 0
    cost_usd: float = 0.0
    estimates: int = 0  # pre-flight estimates added (steps that estimated)
    estimated_cost_usd: float | None = 0.0  # their sum (an upper bound); None when one was unpriced
    unpriced_calls: int = 0
    by_template: dict[str, int] = field(default_factory=dict)

    def estimated(self, cost_usd: float | None, count: int = 1) -> LLMStats:
        """Add a step's pre-flight estimate (``LLMClient.last_estimate``), to show beside the spend."""
        self.estimates += count
        self.estimated_cost_usd = None if cost_usd is None or self.estimated_cost_usd is None \
            else self.estimated_cost_usd + cost_usd
        return self

    def add(self, results: Iterable[LLMResult]) -> LLMStats:
        for result in results:
            self.provider, self.model = result.provider, result.model
            self.calls += 1
            self.by_template[result.template_ref] = self.by_template.get(result.template_ref, 0) + 1
            if result.cached:
                self.cache_hits += 1
                continue
            self.cache_misses += 1
            self.sent += int(result.requests > 0)
            if result.provider != OFFLINE:
                self.requests += result.requests
            self.batched += int(result.via_batch)
            self.batch_fallbacks += int(result.batch_fallback is not None)
            self.retries += result.retries
            self.repairs += int(result.repaired)
            self.api_errors += int(result.error_kind == "api_error")
            self.parse_errors += int(result.error_kind == "parse_error")
            self.input_tokens += result.input_tokens
            self.output_tokens += result.output_tokens
            self.prompt_cache_write_tokens += result.prompt_cache_write_tokens
            self.prompt_cache_read_tokens += result.prompt_cache_read_tokens
            if result.cost_usd is None:
                self.unpriced_calls += 1
            else:
                self.cost_usd += result.cost_usd
        return self

    def merge(self, other: LLMStats) -> LLMStats:
        """Add another tally (one shard's) to this one."""
        if other.calls:
            self.provider, self.model = other.provider, other.model
        for name in ("calls", "requests", "sent", "batched", "batch_fallbacks", "cache_hits", "cache_misses",
                     "retries", "repairs", "api_errors", "parse_errors", "input_tokens", "output_tokens",
                     "prompt_cache_write_tokens", "prompt_cache_read_tokens", "cost_usd", "unpriced_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.estimated(other.estimated_cost_usd, other.estimates)
        for template, count in other.by_template.items():
            self.by_template[template] = self.by_template.get(template, 0) + count
        return self

    def replayed(self) -> LLMStats:
        """The tally a re-run of the same calls records when the cache answers every one (a stored outcome
        used again): each call a cache hit, nothing sent, spent or estimated to spend."""
        return LLMStats(self.provider, self.model, calls=self.calls, cache_hits=self.calls, estimates=self.estimates,
                        estimated_cost_usd=None if self.estimated_cost_usd is None else 0.0,
                        by_template=dict(self.by_template))

    def as_dict(self) -> dict[str, Any]:
        """The tally as metadata; the estimate only where steps estimated (a merge of shard answers has none)."""
        estimate = {} if not self.estimates else {
            "llm_estimated_cost_usd": None if self.estimated_cost_usd is None else round(self.estimated_cost_usd, 6)}
        return {
            "llm_provider": self.provider,
            "llm_model": self.model,
            "llm_calls": self.calls,
            "llm_api_requests": self.requests,
            "llm_via_batch": self.batched,
            "llm_batch_fallbacks": self.batch_fallbacks,
            "llm_cache_hits": self.cache_hits,
            "llm_cache_misses": self.cache_misses,
            "llm_retries": self.retries,
            "llm_repairs": self.repairs,
            "llm_api_errors": self.api_errors,
            "llm_parse_errors": self.parse_errors,
            "llm_input_tokens": self.input_tokens,
            "llm_output_tokens": self.output_tokens,
            "llm_prompt_cache_write_tokens": self.prompt_cache_write_tokens,
            "llm_prompt_cache_read_tokens": self.prompt_cache_read_tokens,
            "llm_cost_usd": round(self.cost_usd, 6),
            **estimate,
        }


def provider_label(stats: LLMStats) -> str:
    """Who judged or wrote, as a person reads it: the provider and model, or the offline heuristics."""
    if stats.provider == OFFLINE:
        return "offline (deterministic heuristics, not a model's judgment)"
    via_batch = f" ({stats.batched} calls via Message Batches)" if stats.batched else ""
    return f"{stats.provider} / {stats.model}{via_batch}"
