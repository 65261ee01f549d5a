"""A judge answer that is well-formed but leaves out what was asked (or adds to it) is repaired like a malformed
one, never cached, and a failure of the call when the repair leaves it so, never a score."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import select

from rag_assets.llm.cache import CachedAnswer
from rag_assets.scoring.metrics.context_recall import TEMPLATE as CONTEXT_RECALL
from rag_assets.store.llm_cache_repository import CACHE
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.scoring.test_judge_through_sdk import _judge, world  # noqa: F401 (world is a fixture)

PRECISION_TOOL, RECALL_TOOL = "record_judge_context_precision", "record_judge_context_recall"


def _other_ids(body: dict) -> Reply:
    """Claude's answers, but the context precision verdicts name a chunk id that was never retrieved."""
    if body["tool_choice"]["name"] == PRECISION_TOOL:
        return Reply(tool_input={"verdicts": [{"chunk_id": "deadbeefdeadbeef", "useful": True}]})
    return claude_judge.judge_responder(body)


def _statements_of_its_own(body: dict) -> Reply:
    """Claude's answers, but context recall judges two supported statements the reference never made beside the
    one it was sent, which it finds unsupported: recall 2/3 where the reference's one statement is not supported."""
    if body["tool_choice"]["name"] == RECALL_TOOL:
        return Reply(tool_input={"statements": [
            {"statement": "the statement sent", "attributed": False},
            {"statement": "an easy statement of the judge's own", "attributed": True},
            {"statement": "another one", "attributed": True}]})
    return claude_judge.judge_responder(body)


def test_context_precision_verdicts_on_chunks_never_retrieved_are_a_failure_not_a_zero(world):  # noqa: F811
    """A tester's fake judge named other chunk ids: every retrieved chunk counted as useless, 0.000 per item."""
    items, responses, versions, cache = world
    with FakeAnthropicServer(_other_ids) as server:
        outcome = _judge(items, responses, versions, cache, server)
        asked = Counter(r.body["tool_choice"]["name"] for r in server.requests)[PRECISION_TOOL]
        again = _judge(items, responses, versions, cache, server)
        asked_again = Counter(r.body["tool_choice"]["name"] for r in server.requests)[PRECISION_TOOL] - asked
    assert asked == asked_again == 2 * len(items), "asked, repaired once, and nothing cached: asked again next run"
    for scores in [*outcome.items, *again.items]:
        first = responses[scores.item_id].retrieved[0].key
        assert "context_precision" not in scores.values
        assert scores.failures["context_precision"].startswith(
            "judge_context_precision@3 parse_error: the answer is incomplete: "
            f"no verdict for retrieved chunk {first}, ")
        assert "faithfulness" in scores.values


def test_context_recall_verdicts_on_statements_never_sent_are_a_failure_not_a_higher_recall(world):  # noqa: F811
    items, responses, versions, cache = world
    with FakeAnthropicServer(_statements_of_its_own) as server:
        outcome = _judge(items, responses, versions, cache, server)
        repair = next(r.body for r in server.requests[::-1] if r.body["tool_choice"]["name"] == RECALL_TOOL)
    assert "3 verdicts for the 1 reference statements sent" in repair["messages"][-1]["content"][0]["content"]
    for scores in outcome.items:
        assert "context_recall" not in scores.values
        assert scores.failures["context_recall"] == ("judge_context_recall@3 parse_error: the answer is incomplete: "
                                                     "3 verdicts for the 1 reference statements sent")


def test_an_incomplete_answer_cached_earlier_is_asked_again_and_replaced(world):  # noqa: F811
    """Answers cached before a template checked what they cover stay in users' stores: read, they would fail the
    item on every run; asked again, the complete answer takes their place."""
    items, responses, versions, cache = world
    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        _judge(items, responses, versions, cache, server)
        with cache.engine.connect() as conn:
            recall_keys = list(conn.execute(select(CACHE.c.cache_key).where(
                CACHE.c.template_ref == CONTEXT_RECALL.ref)).scalars())
        for key in recall_keys:
            cache.put(key, provider="anthropic", model="claude-sonnet-5-5", template_ref=CONTEXT_RECALL.ref,
                      answer=CachedAnswer({"statements": []}, 1, 1, 0.0))
        before = server.count()
        outcome = _judge(items, responses, versions, cache, server)
        asked = [r.body["tool_choice"]["name"] for r in server.requests[before:]]
        after = server.count()
        _judge(items, responses, versions, cache, server)
        assert server.count() == after, "the complete answers replaced the incomplete ones in the cache"
    assert asked == [RECALL_TOOL] * len(recall_keys) == [RECALL_TOOL] * len(items)
    assert all("context_recall" in s.values and "context_recall" not in s.failures for s in outcome.items)
