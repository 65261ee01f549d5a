import pytest

from rag_assets.errors import ConfigError
from rag_assets.llm.factory import make_llm_client
from rag_assets.llm.offline import OfflineClient
from rag_assets.llm.pricing import Price, cost_usd, price_for


def test_cost_is_computed_per_million_tokens_by_longest_prefix():
    assert cost_usd("claude-sonnet-5-5", 1_000, 500) == pytest.approx((1_000 * 2 + 500 * 10) / 1e6)
    assert price_for("claude-haiku-4-5-20251001") == Price(1.0, 5.0)
    assert price_for("claude-opus-4-1") == Price(15.0, 75.0)
    assert price_for("claude-opus-4-7") == Price(5.0, 25.0)


def test_an_unknown_model_has_no_price_rather_than_a_guess():
    assert cost_usd("my-local-model", 10, 10) is None


def test_without_a_key_auto_is_offline_and_anthropic_is_refused():
    assert isinstance(make_llm_client("auto", api_key=None), OfflineClient)
    with pytest.raises(ConfigError, match="needs ANTHROPIC_API_KEY"):
        make_llm_client("anthropic", api_key=None)
    with pytest.raises(ConfigError, match="must be one of auto, anthropic, offline"):
        make_llm_client("openai")
