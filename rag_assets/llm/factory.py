"""Choose the LLM provider: Claude when a key is given, the offline heuristics otherwise."""

from __future__ import annotations

from collections.abc import Mapping

from rag_assets.errors import ConfigError
from rag_assets.llm.batch import BatchJournal, BatchSettings
from rag_assets.llm.budget import Budget
from rag_assets.llm.client import LLMClient
from rag_assets.llm.pricing import DEFAULT_PRICES, Price

PROVIDERS = ("auto", "anthropic", "offline")
DEFAULT_MODEL = "claude-sonnet-5-5"


def answers_offline(provider: str, key_set: bool) -> bool:
    """Whether ``make_llm_client`` gives the offline heuristics for these settings: ``offline``, or ``auto`` without
    a key."""
    return provider == "offline" or (provider == "auto" and not key_set)


def llm_identity(provider: str, key_set: bool, model: str) -> str:
    """Which LLM ``make_llm_client`` gives for these settings, as ``provider:model``: ``offline:<the heuristics'
    version>`` without a key (under ``auto``), else ``anthropic:<model>``. What an asset's outputs depend on, so
    an asset the LLM scores carries it in its code version."""
    if provider not in PROVIDERS:
        raise ConfigError(f"LLM provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
    if answers_offline(provider, key_set):
        from rag_assets.llm.offline import OfflineClient

        return f"{OfflineClient.provider}:{OfflineClient.model}"
    return f"anthropic:{model}"


def make_llm_client(
    provider: str = "auto",
    *,
    api_key: str | None = None,
    model: str = DEFAULT_MODEL,
    base_url: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 4,
    max_concurrency: int = 4,
    requests_per_minute: int | None = None,
    prices: Mapping[str, Price] = DEFAULT_PRICES,
    batch: BatchSettings | None = None,
    journal: BatchJournal | None = None,
    budget: Budget | None = None,
    prompt_caching: bool = True,
) -> LLMClient:
    """``batch`` (with the store's ``journal``) sends large runs to Claude as Message Batches; the
    offline heuristics answer at once and ignore it. ``budget`` caps what a run may spend (the
    offline heuristics cost nothing, so it never stops them). ``prompt_caching``: mark Claude's shared
    prompt prefixes for its prompt cache."""
    if provider not in PROVIDERS:
        raise ConfigError(f"LLM provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
    if answers_offline(provider, bool(api_key)):
        from rag_assets.llm.offline import OfflineClient

        return OfflineClient(max_concurrency=max_concurrency, budget=budget)
    if not api_key:
        raise ConfigError("LLM provider 'anthropic' needs ANTHROPIC_API_KEY to be set")
    from rag_assets.llm.anthropic_client import AnthropicClient

    return AnthropicClient(api_key, model, base_url=base_url, timeout=timeout, max_retries=max_retries,
                           max_concurrency=max_concurrency, requests_per_minute=requests_per_minute, prices=prices,
                           batch=batch, journal=journal, budget=budget, prompt_caching=prompt_caching)
