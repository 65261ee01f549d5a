"""A judge that extracts no claim from an answer that states something has not judged it: through the real SDK
and the fake Messages API, such an answer is repaired like an incomplete one, never cached, and recorded as a
failure of the item's faithfulness, never scored 1.0. A decline states nothing: no claim is its right answer."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rag_assets.golden.models import GoldenItem
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.results import LLMResult
from rag_assets.rag.models import Citation, RagResponse, RetrievedChunk
from rag_assets.scoring.embedding import make_embedder
from rag_assets.scoring.evaluate import evaluate, score_item
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY

FAITHFULNESS_TOOL = "record_judge_faithfulness"
LIMITS = "The API allows 50 requests per minute for each key."
DECLINE = "I cannot answer that from the provided documents."
ITEMS = [GoldenItem("states", 1, "factual", "How many requests per minute does the API allow?", "50.", (), "cv-1", "t"),
         GoldenItem("declines", 1, "factual", "Who founded the company?", "Ada.", (), "cv-1", "t")]
RESPONSES = {"states": RagResponse("states", f"{LIMITS} [c1]", (RetrievedChunk("c1", LIMITS, 1.0, 1),)),
             "declines": RagResponse("declines", DECLINE, (RetrievedChunk("c2", LIMITS, 1.0, 1),))}


def _no_claims(body: dict) -> Reply:
    """Claude's answers, but faithfulness extracts no claim from any answer."""
    if body["tool_choice"]["name"] == FAITHFULNESS_TOOL:
        return Reply(tool_input={"claims": []})
    return claude_judge.judge_responder(body)


def test_no_claim_from_a_stating_answer_is_a_failure_and_from_a_decline_a_one(tmp_path: Path):
    cache = SqlLLMCache(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    with FakeAnthropicServer(_no_claims) as server:
        client = AnthropicClient(API_KEY, "claude-sonnet-5-5", base_url=server.base_url, max_retries=0)
        runs = []
        for _ in range(2):
            before = server.count()
            runs.append(evaluate(ITEMS, RESPONSES, {}, {}, client, cache, make_embedder(), 5))
            runs.append(Counter(r.body["tool_choice"]["name"] for r in server.requests[before:])[FAITHFULNESS_TOOL])
        repair = next(r.body for r in server.requests[::-1] if r.body["tool_choice"]["name"] == FAITHFULNESS_TOOL)
    first, asked, again, asked_again = runs
    gap = f'no claim extracted from an answer that makes 1 statement: "{LIMITS}"'
    for outcome in (first, again):
        states, declines = (next(s for s in outcome.items if s.item_id == i) for i in ("states", "declines"))
        assert "faithfulness" not in states.values
        assert states.failures["faithfulness"] == f"judge_faithfulness@3 parse_error: the answer is incomplete: {gap}"
        assert declines.values["faithfulness"] == 1.0 and "faithfulness" not in declines.failures
    assert (asked, asked_again) == (3, 2), "the stating answer asked and repaired on each run; the decline cached"
    assert gap in repair["messages"][-1]["content"][0]["content"], "the repair request says what is missing"


def test_a_judgment_with_no_claim_for_a_stating_answer_is_never_scored_when_read_back():
    """An answer kept from before the check (a judged shard, a stored output) reaches the metric without the client:
    the metric itself records it as incomplete; the decline's scores 1."""
    def scored(item_id: str):
        result = LLMResult(f"{item_id}|faithfulness", "anthropic", "claude-sonnet-5-5", "judge_faithfulness@3",
                           {"claims": []})
        item = next(i for i in ITEMS if i.item_id == item_id)
        return score_item(item, (), RESPONSES[item_id], {}, None, {"faithfulness": result}, make_embedder(), 5, 0.5)

    states, declines = scored("states"), scored("declines")
    assert "faithfulness" not in states.values and states.failures["faithfulness"] == (
        f'judge_faithfulness@3 incomplete: no claim extracted from an answer that makes 1 statement: "{LIMITS}"')
    assert declines.values["faithfulness"] == 1.0 and not declines.failures



OLDER = "The API allowed 20 requests per minute for each key."
CITING = RagResponse("states", f"{LIMITS} [c1]",
                     (RetrievedChunk("c1", LIMITS, 1.0, 1), RetrievedChunk("c2", OLDER, 0.9, 2)),
                     citations=(Citation(LIMITS, "c1"), Citation(LIMITS, "c9")))
VERSIONS = {"c1": "2.0", "c2": "1.0"}


def _faithfulness_scores(result: LLMResult):
    return score_item(ITEMS[0], (), CITING, VERSIONS, None, {"faithfulness": result}, make_embedder(), 5, 0.5)


def test_the_metrics_reading_a_claimless_judgment_of_a_stating_answer_record_it_as_incomplete_never_score_it():
    """Citation accuracy and temporal faithfulness read faithfulness's judgment: a claimless one of an answer that
    states something is a judge failure for each of them as for faithfulness, not a 0 (a correct citation) or an
    undefined value."""
    scores = _faithfulness_scores(LLMResult("states|faithfulness", "anthropic", "claude-sonnet-5-5",
                                            "judge_faithfulness@3", {"claims": []}))

    gap = f'judge_faithfulness@3 incomplete: no claim extracted from an answer that makes 1 statement: "{LIMITS}"'
    assert {m: scores.failures.get(m) for m in ("faithfulness", "citation_accuracy", "temporal_faithfulness")} == {
        "faithfulness": gap, "citation_accuracy": gap, "temporal_faithfulness": gap}
    assert not {"faithfulness", "citation_accuracy", "temporal_faithfulness"} & set(scores.values)


def test_a_citation_of_an_id_not_returned_counts_as_fabricated_whatever_the_judge_did():
    """Fabrication is the response's: c9 was never returned, so it counts when the judge call failed or judged
    nothing as when it judged the answer."""
    claim = {"claim": LIMITS, "verdict": "grounded", "supporting_chunk_ids": ["c1"]}
    outcomes = [LLMResult("states|faithfulness", "anthropic", "claude-sonnet-5-5", "judge_faithfulness@3", output,
                          error=error, error_kind=kind)
                for output, error, kind in (({"claims": [claim]}, None, None), (None, "overloaded", "api_error"),
                                            ({"claims": []}, None, None))]
    judged, failed, claimless = (_faithfulness_scores(result) for result in outcomes)

    assert judged.values["citation_accuracy"] == 0.5 and failed.failures["citation_accuracy"] == (
        "judge_faithfulness@3 api_error: overloaded")
    assert [s.fabricated_citations for s in (judged, failed, claimless)] == [1, 1, 1]
