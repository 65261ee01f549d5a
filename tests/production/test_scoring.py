"""Production queries scored by the judge through the real SDK: reference-free metrics only, cached, failures kept."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.offline import OfflineClient
from rag_assets.production.logs import read_logs
from rag_assets.production.scoring import PRODUCTION_METRICS, score_queries
from rag_assets.scoring.embedding import HashingEmbedder
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.conftest import PROJECT_ROOT
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY

DAY_LOG = PROJECT_ROOT / "data" / "production_logs"


def _queries(count: int):
    records = sorted(read_logs(DAY_LOG).records, key=lambda r: r.query_id)[:count]
    assert len(records) == count
    return records


def test_three_judge_calls_per_answered_query_at_the_server_and_none_on_a_rerun(tmp_path: Path):
    queries = _queries(6)
    unanswered = queries[0].__class__(**{**queries[0].__dict__, "query_id": "no-answer", "answer": None})
    cache = SqlLLMCache(get_engine(f"sqlite:///{tmp_path / 'store.db'}"))
    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        client = AnthropicClient(API_KEY, "claude-sonnet-5-5", base_url=server.base_url, max_retries=1)
        outcome = score_queries([*queries, unanswered], client, cache, HashingEmbedder())
        tools = Counter(r.body["tool_choice"]["name"] for r in server.requests)
        assert tools == {"record_judge_faithfulness": 6, "record_judge_answer_relevance": 6,
                         "record_judge_context_precision": 6}
        server.reset()
        again = score_queries([*queries, unanswered], client, cache, HashingEmbedder())
        assert server.count() == 0
    assert [i.values for i in again.items] == [i.values for i in outcome.items]
    by_id = {item.item_id: item for item in outcome.items}
    assert by_id["no-answer"].rag_error == "no answer was served" and by_id["no-answer"].values == {}, (
        "not judged, and out of the day's means: its drift alerts would blame the generator for an outage")
    for query in queries:
        item = by_id[query.query_id]
        assert item.question_type == "production"
        assert set(item.values) <= set(PRODUCTION_METRICS) and {"faithfulness", "answer_relevance",
                                                                 "context_precision"} <= set(item.values)


def test_an_answer_that_contradicts_its_chunks_scores_lower_than_the_served_one():
    [query] = [r for r in read_logs(DAY_LOG).records if r.query_id == "prod-20261120-019"]
    assert "30 days" in query.answer
    wrong = query.__class__(**{**query.__dict__, "query_id": "wrong", "answer": query.answer.replace("30 days", "90 days")})
    outcome = score_queries([query, wrong], OfflineClient(), None, HashingEmbedder())
    served, contradicted = outcome.items
    assert served.values["faithfulness"] == 1.0 and sum(served.hallucinations.values()) == 0
    assert contradicted.values["faithfulness"] == 0.0 and contradicted.hallucinations == {"fabrication": 0, "inconsistency": 1,
                                                                               "out_of_context": 0}
