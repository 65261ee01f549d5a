"""A judge answer that is well-formed but leaves out what was asked is a failure of the call, never a score."""

from __future__ import annotations

from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.scoring.test_judge_through_sdk import _judge, world  # noqa: F401 (world is a fixture)


def _other_ids(body: dict) -> Reply:
    """Claude's answers, but the context precision verdicts name a chunk id that was never retrieved."""
    if body["tool_choice"]["name"] == "record_judge_context_precision":
        return Reply(tool_input={"verdicts": [{"chunk_id": "deadbeefdeadbeef", "useful": True}]})
    return claude_judge.judge_responder(body)


def test_context_precision_verdicts_on_chunks_never_retrieved_are_a_failure_not_a_zero(world):  # noqa: F811
    """A tester's fake judge named other chunk ids: every retrieved chunk counted as useless, 0.000 per item."""
    items, responses, versions, cache = world
    with FakeAnthropicServer(_other_ids) as server:
        outcome = _judge(items, responses, versions, cache, server)
    for scores in outcome.items:
        first = responses[scores.item_id].retrieved[0].key
        assert "context_precision" not in scores.values
        assert scores.failures["context_precision"].startswith(
            f"judge_context_precision@3 incomplete: no verdict for retrieved chunk {first}, ")
        assert "faithfulness" in scores.values
