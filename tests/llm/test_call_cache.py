"""The call cache's cost: a run looks its calls up with one SELECT per batch of keys, a template's output schema
is built once, and the offline judge's answers are cached like a model's (an unchanged re-run computes nothing)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import event

from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.cache import CacheEntry, CachedAnswer
from rag_assets.llm.offline import OfflineClient
from rag_assets.llm.results import LLMCall, LLMStats
from rag_assets.llm.templates import PromptTemplate
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.embedding import HashingEmbedder
from rag_assets.scoring.evaluate import EvaluationOutcome, evaluate, judge_calls
from rag_assets.store.engine import IN_BATCH, get_engine
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.fakes.claude_generation import API_KEY
from tests.fakes.judge_world import JudgeWorld, judge_world


class Verdict(BaseModel):
    ok: bool


TEMPLATE = PromptTemplate(id="cache_probe", version="1", system="Say whether the text is fine.",
                          user=lambda i: f"Text: {i['text']}", output_model=Verdict,
                          offline=lambda i: {"ok": len(i["text"]) % 2 == 0}, tool_description="Record the verdict.",
                          max_tokens=100)


@pytest.fixture
def engine(tmp_path: Path):
    return get_engine(f"sqlite:///{tmp_path / 'store.db'}")


def _statements(engine) -> list[str]:
    """Every SQL statement the engine sends from now on, as sent."""
    sent: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: sent.append(statement))
    return sent


def test_a_run_looks_its_calls_up_with_one_select_per_batch_of_keys_and_writes_free_answers_together(engine):
    calls = [LLMCall(f"c{n}", TEMPLATE, {"text": f"item {n}"}) for n in range(IN_BATCH + 1)]
    sent = _statements(engine)
    first = OfflineClient().run(calls, SqlLLMCache(engine))
    assert [s.split()[0] for s in sent if "llm_cache" in s] == ["SELECT", "SELECT", "SELECT", "INSERT", "SELECT",
                                                                 "INSERT"]
    sent.clear()
    second = OfflineClient().run(calls, SqlLLMCache(engine))
    assert [s.split()[0] for s in sent if "llm_cache" in s] == ["SELECT", "SELECT"], "one SELECT per batch of keys"
    assert LLMStats().add(second).cache_hits == IN_BATCH + 1 and [r.output for r in second] == [
        r.output for r in first]


def test_put_many_keeps_the_answers_cached_already_and_writes_the_rest(engine):
    cache = SqlLLMCache(engine)
    old, new = CachedAnswer({"ok": True}, 1, 1, 0.5), CachedAnswer({"ok": False}, 2, 2, 0.0)
    cache.put("a", provider="anthropic", model="m", template_ref="t@1", answer=old)
    cache.put_many([CacheEntry("a", "offline", "m", "t@1", new), CacheEntry("b", "offline", "m", "t@1", new),
                    CacheEntry("b", "offline", "m", "t@1", new)])
    assert cache.get_many(["a", "b", "c", "a"]) == {"a": old, "b": new}


def test_a_templates_output_schema_is_built_once_whatever_the_number_of_requests():
    built: list[str] = []

    class CountedVerdict(Verdict):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            built.append(cls.__name__)
            return super().model_json_schema(*args, **kwargs)

    template = dataclasses.replace(TEMPLATE, id="schema_probe", output_model=CountedVerdict)
    calls = [LLMCall(f"c{n}", template, {"text": f"item {n}"}) for n in range(50)]
    estimate = AnthropicClient(API_KEY, "claude-sonnet-5-5").estimate(calls)
    assert estimate.calls == 50 and built == ["CountedVerdict"]
    OfflineClient().run(calls)
    assert built == ["CountedVerdict"]


def _scores(outcome: EvaluationOutcome) -> list[tuple[str, dict[str, float], dict[str, str]]]:
    return [(i.item_id, i.values, i.failures) for i in outcome.items]


def _judge(world: JudgeWorld, cache: SqlLLMCache | None, responses: dict[str, RagResponse] | None = None
           ) -> EvaluationOutcome:
    return evaluate(world.items, responses or world.responses, world.versions, world.statements, OfflineClient(),
                    cache, HashingEmbedder(), 5)


def test_an_unchanged_offline_rerun_computes_no_judgment_and_scores_exactly_as_without_the_cache(engine):
    world = judge_world(engine, 8)
    calls = sum(len(judge_calls(i, world.responses[i.item_id], world.versions, i.reference_statements))
                for i in world.items)
    uncached = _judge(world, None)
    cache = SqlLLMCache(engine)
    cold, rerun = _judge(world, cache), _judge(world, cache)
    assert (cold.stats.cache_misses, cold.stats.cache_hits) == (calls, 0), "computed by the heuristics"
    assert (rerun.stats.cache_misses, rerun.stats.cache_hits) == (0, calls)
    assert _scores(rerun) == _scores(cold) == _scores(uncached)
    assert rerun.stats.provider == "offline"


def test_an_offline_rerun_recomputes_only_the_judgments_whose_inputs_changed(engine):
    world = judge_world(engine, 8)
    cache = SqlLLMCache(engine)
    _judge(world, cache)
    item = world.items[3]
    changed = {**world.responses, item.item_id: dataclasses.replace(world.responses[item.item_id],
                                                                    answer="Something else entirely.")}
    rerun = _judge(world, cache, changed)
    assert rerun.stats.cache_misses == 2, "faithfulness and answer relevance read the answer; the others do not"
    assert _scores(rerun) == _scores(_judge(world, None, changed))
