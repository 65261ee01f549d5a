"""The budget gate, through the real SDK against the fake Messages API: the pre-flight estimate stops a run
before any request, the spend stops it mid-way, and a re-run with a higher budget pays only for the rest."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pydantic import BaseModel

from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.batch import BatchSettings
from rag_assets.llm.budget import Budget, BudgetExceeded, MemoryLedger
from rag_assets.llm.offline import OfflineClient
from rag_assets.llm.results import LLMCall
from rag_assets.llm.templates import PromptTemplate
from rag_assets.settings import Settings
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from rag_assets.store.llm_cache_repository import SqlLLMCache
from rag_assets.store.llm_spend_repository import SqlSpendLedger
from rag_assets.errors import ConfigError
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY

MODEL = "claude-sonnet-5-5"  # $2 / $10 per million input / output tokens


class Verdict(BaseModel):
    ok: bool


TEMPLATE = PromptTemplate(id="budget_probe", version="1", system="Say whether the text is fine.",
                          user=lambda i: f"Text: {i['text']}", output_model=Verdict,
                          offline=lambda i: {"ok": True}, tool_description="Record the verdict.", max_tokens=100)
CALLS = [LLMCall(f"c{n}", TEMPLATE, {"text": f"item number {n}"}) for n in range(6)]


@pytest.fixture
def engine(tmp_path: Path):
    return get_engine(f"sqlite:///{tmp_path / 'store.db'}")


def _client(server: FakeAnthropicServer, budget: Budget | None, **options) -> AnthropicClient:
    return AnthropicClient(API_KEY, MODEL, base_url=server.base_url, max_retries=0, budget=budget, **options)


def _heavy(body: dict) -> Reply:
    """Every answer is billed 20,000 input and 10 output tokens ($0.0401), far above what its prompt suggests."""
    return Reply(tool_input={"ok": True}, input_tokens=20_000, output_tokens=10)


def test_an_estimate_over_the_budget_fails_naming_estimate_budget_and_how_to_raise_it_with_zero_requests(engine):
    with FakeAnthropicServer() as server:
        client = _client(server, Budget("run-1", "evaluation", run_max_usd=0.005))
        with pytest.raises(BudgetExceeded) as failure:
            client.run(CALLS, SqlLLMCache(engine))
        assert server.count() == 0
    message = str(failure.value)
    estimate = client.last_estimate
    # six calls of at most 100 output tokens: 600 x $10/M = $0.006 of output alone
    assert estimate.calls == 6 and estimate.max_output_tokens == 600 and estimate.counted
    assert estimate.cost_usd == pytest.approx((estimate.input_tokens * 2 + 600 * 10) / 1e6)
    assert f"estimated cost ${estimate.cost_usd:.4f}" in message
    assert "budget: $0.0050, of which $0.0000 is spent; nothing was sent" in message
    assert "RAG_ASSETS_MAX_COST_USD" in message and "max_cost_usd in its run config" in message


def test_the_asset_limit_gates_too_and_cache_hits_are_not_estimated(engine):
    cache = SqlLLMCache(engine)
    with FakeAnthropicServer() as server:
        _client(server, None).run(CALLS[:4], cache)
        client = _client(server, Budget("run-2", "evaluation", scope_max_usd=0.0025))
        results = client.run(CALLS, cache)  # two misses: at most 200 output tokens, $0.002 plus input
        assert server.count() == 6 and all(r.ok for r in results)
    assert (client.last_estimate.calls, client.last_estimate.cache_hits) == (2, 4)
    assert client.last_estimate.cost_usd < 0.0025


def test_the_batch_estimate_is_priced_at_half(engine):
    with FakeAnthropicServer() as server:
        direct = _client(server, None).estimate(CALLS)
        batched = _client(server, None, batch=BatchSettings(min_calls=2), journal=SqlBatchJournal(engine)).estimate(CALLS)
        assert server.count() == 0
    assert batched.batch and not direct.batch
    assert batched.cost_usd == pytest.approx(direct.cost_usd / 2)


def test_a_run_that_passes_its_budget_stops_keeps_its_answers_and_a_rerun_pays_only_for_the_rest(engine):
    cache, ledger = SqlLLMCache(engine), SqlSpendLedger(engine)
    with FakeAnthropicServer(_heavy) as server:
        budget = Budget("run-3", "evaluation", run_max_usd=0.05, ledger=ledger)
        with pytest.raises(BudgetExceeded) as failure:
            _client(server, budget, max_concurrency=1).run(CALLS, cache)
        # 1st request: $0 spent; 2nd: $0.0401 < $0.05; then $0.0802 >= $0.05: no 3rd
        assert server.count() == 2
        assert ledger.spent("run-3") == pytest.approx(2 * (20_000 * 2 + 10 * 10) / 1e6)
        assert "2 calls were answered and are kept in the LLM cache; 4 were not sent" in str(failure.value)
        assert "run run-3 has spent $0.0802 of its $0.0500 budget" in str(failure.value)
        results = _client(server, Budget("run-4", "evaluation", run_max_usd=1.0, ledger=ledger)).run(CALLS, cache)
        assert server.count() == 6  # only the 4 missing calls
    assert all(r.ok for r in results) and sum(r.cached for r in results) == 2
    assert ledger.spent("run-4") == pytest.approx(4 * 0.0401)


def test_shard_steps_in_other_processes_share_the_runs_spend_through_the_store(engine):
    cache = SqlLLMCache(engine)
    with FakeAnthropicServer(_heavy) as server:
        first = Budget("run-5", "evaluation", run_max_usd=0.084, ledger=SqlSpendLedger(engine))
        _client(server, first).run(CALLS[:2], cache)
        # another shard, another process: its own ledger object on the same store sees $0.0802 spent, and
        # its four calls' output alone (4 x 100 tokens x $10/M = $0.004) does not fit the $0.0038 left
        second = Budget("run-5", "evaluation", run_max_usd=0.084, ledger=SqlSpendLedger(get_engine(str(engine.url))))
        with pytest.raises(BudgetExceeded, match=r"budget: \$0\.0840, of which \$0\.0802 is spent; nothing was sent"):
            _client(server, second).run(CALLS[2:], cache)
        assert server.count() == 2


def test_a_later_batch_of_a_step_that_does_not_fit_says_what_the_steps_earlier_batches_spent(engine):
    # judge_probes and ab_comparison run several batches through one budget: the first fits and pays, the
    # second's estimate does not fit what is left, so "nothing was sent" would be false for the step
    cache = SqlLLMCache(engine)
    with FakeAnthropicServer(_heavy) as server:
        client = _client(server, Budget("run-8", "judge_probes", run_max_usd=0.084, ledger=SqlSpendLedger(engine)))
        client.run(CALLS[:2], cache)  # fits ($0.0021 at most), billed $0.0802
        with pytest.raises(BudgetExceeded) as failure:
            client.run(CALLS[2:], cache)  # 4 x 100 output tokens alone ($0.004) exceed the $0.0038 left
        assert server.count() == 2
    message = str(failure.value)
    assert "nothing was sent" not in message
    assert ("budget: $0.0840, of which $0.0802 is spent; these 4 calls were not sent "
            "(this step's earlier calls already sent 2 requests for $0.0802)") in message


def test_a_stop_of_uncached_calls_does_not_promise_a_cheaper_rerun():
    # the "repeat" probe runs without the LLM cache: its answered calls are not kept
    with FakeAnthropicServer(_heavy) as server:
        budget = Budget("run-9", "judge_probes", run_max_usd=0.05)
        with pytest.raises(BudgetExceeded) as failure:
            _client(server, budget, max_concurrency=1).run(CALLS, None)
        assert server.count() == 2
    message = str(failure.value)
    assert "kept in the LLM cache" not in message and "pays only" not in message
    assert "2 calls were answered but not cached (a re-run sends them again); 4 were not sent" in message


def test_the_offline_client_costs_nothing_and_never_trips_the_gate():
    client = OfflineClient(budget=Budget("run-6", "evaluation", run_max_usd=0.0))
    results = client.run(CALLS)
    assert all(r.ok for r in results) and client.last_estimate.cost_usd == 0.0
    assert client.budget.ledger.spent("run-6") == 0.0


def test_a_memory_ledger_sums_by_run_and_scope_and_a_negative_limit_is_refused():
    ledger = MemoryLedger()
    ledger.add("r", "evaluation", 0.5)
    ledger.add("r", "question_candidates", 0.25)
    ledger.add("other", "evaluation", 1.0)
    assert (ledger.spent("r"), ledger.spent("r", "evaluation")) == (0.75, 0.5)
    with pytest.raises(ValueError, match="must not be negative"):
        Budget("r", "evaluation", run_max_usd=-1)


def test_the_env_var_sets_the_run_budget_and_a_bad_value_names_it():
    assert Settings.from_env({"RAG_ASSETS_MAX_COST_USD": "2.5"}).max_cost_usd == 2.5
    assert Settings.from_env({}).max_cost_usd is None
    with pytest.raises(ConfigError, match="RAG_ASSETS_MAX_COST_USD='ten' is not a number of US dollars >= 0; "
                                          "for example RAG_ASSETS_MAX_COST_USD=10"):
        Settings.from_env({"RAG_ASSETS_MAX_COST_USD": "ten"})


def test_where_token_counting_is_unreachable_the_gate_uses_the_projects_estimate():
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    client = AnthropicClient(API_KEY, MODEL, base_url=base_url, max_retries=0,
                             budget=Budget("run-7", "evaluation", run_max_usd=0.001))
    with pytest.raises(BudgetExceeded, match="tokens \\(estimated\\)"):
        client.run(CALLS)
    assert not client.last_estimate.counted and client.last_estimate.input_tokens > 0
