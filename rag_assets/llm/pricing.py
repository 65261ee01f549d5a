"""Dollar cost of a call from a price table (USD per million tokens).

Prices change; the table is a default that a user overrides with the LLM resource's
``prices`` field. A model with no price is recorded with cost None, never guessed.

Prompt caching bills the input tokens written to the cache at ``cache_write`` times the input
price (1.25 for the 5-minute cache) and those read from it at ``cache_read`` times (0.1); the
Messages API reports them apart from ``input_tokens``, which are only the uncached rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    cache_write: float = 1.25  # times the input price, for tokens written to the prompt cache
    cache_read: float = 0.1  # times the input price, for tokens read from it


# Published list prices as of 2026-11. Longest matching prefix wins, so a dated model id
# (claude-haiku-4-5-20251001) finds its family.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-fable-5": Price(10.0, 50.0),
    "claude-mythos-5": Price(10.0, 50.0),
    "claude-opus-5-5": Price(4.0, 20.0),
    "claude-opus-5": Price(5.0, 25.0),
    "claude-opus-4-0": Price(15.0, 75.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4": Price(5.0, 25.0),
    "claude-sonnet-5": Price(2.0, 10.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-haiku-5-5": Price(0.1, 0.5),
    "claude-haiku-4": Price(1.0, 5.0),
}


#: The Message Batches API bills every token at half the direct price.
BATCH_DISCOUNT = 0.5


def price_for(model: str, prices: Mapping[str, Price] = DEFAULT_PRICES) -> Price | None:
    matches = [prefix for prefix in prices if model.startswith(prefix)]
    return prices[max(matches, key=len)] if matches else None


def cost_usd(model: str, input_tokens: int, output_tokens: int,
             prices: Mapping[str, Price] = DEFAULT_PRICES, *, batch: bool = False, cache_write_tokens: int = 0,
             cache_read_tokens: int = 0) -> float | None:
    """``input_tokens`` are the uncached ones; ``cache_*_tokens`` what the prompt cache wrote and read."""
    price = price_for(model, prices)
    if price is None:
        return None
    cached = cache_write_tokens * price.cache_write + cache_read_tokens * price.cache_read
    direct = ((input_tokens + cached) * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1_000_000
    return direct * BATCH_DISCOUNT if batch else direct


#: the shortest prefix the Messages API caches, by model-id prefix (longest match wins); shorter ones are
#: billed as ordinary input
MIN_CACHEABLE_TOKENS: dict[str, int] = {"claude": 1024, "claude-haiku": 2048}


def min_cacheable_tokens(model: str) -> int:
    matches = [prefix for prefix in MIN_CACHEABLE_TOKENS if model.startswith(prefix)]
    return MIN_CACHEABLE_TOKENS[max(matches, key=len)] if matches else MIN_CACHEABLE_TOKENS["claude"]
