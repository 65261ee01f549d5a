"""The judge through the real anthropic SDK and the fake Messages API: call budget, cache, failures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.generation.generate import run_generation
from rag_assets.generation.planning import plan_tasks
from rag_assets.generation.models import GenerationConfig
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.llm.batch import BatchSettings
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.bm25 import Bm25Index
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagQuery
from rag_assets.rag.reference import ReferenceRagSystem
from rag_assets.rag.system import run_rag
from rag_assets.scoring.embedding import HashingEmbedder
from rag_assets.scoring.evaluate import evaluate
from rag_assets.scoring.judge_prompts import FAITHFULNESS
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from rag_assets.store.llm_cache_repository import SqlLLMCache
from tests.conftest import SAMPLE_CORPUS
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY

CORE_METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")

JUDGE_TOOLS = {"record_judge_faithfulness", "record_judge_answer_relevance", "record_judge_context_precision",
               "record_judge_context_recall"}


@pytest.fixture
def world(tmp_path: Path):
    engine = get_engine(f"sqlite:///{tmp_path / 'store.db'}")
    corpus = SqlCorpusRepository(engine)
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), corpus).version_id
    chunks = corpus.snapshot_chunks(version)
    outcome = run_generation(plan_tasks(chunks, set(), GenerationConfig(max_tasks=14, type_mix={"factual": 1})),
                             OfflineClient(), None, version)
    items = [GoldenItem(c.candidate_id, 1, c.question_type, c.question, c.reference_answer, c.relevant_chunks, version,
                        reference_statements=(c.reference_answer,)) for c in outcome.candidates][:12]
    system = ReferenceRagSystem(Bm25Index.build(chunks), 5, OfflineClient(), None, {c.chunk_id: c.doc_version for c in chunks})
    responses = {r.item_id: r for r in run_rag(system, [RagQuery(i.item_id, i.question, version) for i in items], SnapshotChunks.of(chunks))}
    return items, responses, {c.chunk_id: c.doc_version for c in chunks}, SqlLLMCache(engine)


def _judge(items, responses, versions, cache, server, **batch):
    client = AnthropicClient(API_KEY, "claude-sonnet-5-5", base_url=server.base_url, max_retries=1, **batch)
    statements = {i.item_id: i.reference_statements for i in items}
    return evaluate(items, responses, versions, statements, client, cache, HashingEmbedder(), 5)


def test_four_calls_per_item_counted_at_the_server_and_none_on_a_rerun(world):
    items, responses, versions, cache = world
    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        first = _judge(items, responses, versions, cache, server)
        per_tool = Counter(r.body["tool_choice"]["name"] for r in server.requests)
        assert set(per_tool) == JUDGE_TOOLS and server.count() == 4 * len(items)
        assert all(r.body["max_tokens"] > 0 and r.body["tools"][0]["input_schema"] for r in server.requests)
        before = server.count()
        second = _judge(items, responses, versions, cache, server)
        assert server.count() == before, "an unchanged re-run makes no call"
    assert second.stats.cache_hits == 4 * len(items)
    for metric in CORE_METRICS:
        assert all(metric in s.values for s in first.items), metric
    assert [s.values for s in second.items] == [s.values for s in first.items]


def test_a_malformed_judge_answer_is_a_recorded_failure_and_no_score(world):
    items, responses, versions, cache = world
    claude_judge.BROKEN.add("record_judge_context_precision")
    try:
        with FakeAnthropicServer(claude_judge.judge_responder) as server:
            outcome = _judge(items, responses, versions, cache, server)
            repairs = Counter(r.body["tool_choice"]["name"] for r in server.requests)["record_judge_context_precision"]
    finally:
        claude_judge.BROKEN.clear()
    assert repairs == 2 * len(items), "one repair attempt each, then recorded"
    for scores in outcome.items:
        assert "context_precision" not in scores.values
        assert scores.failures["context_precision"].startswith("judge_context_precision@3 parse_error: the answer does not match")
        assert "faithfulness" in scores.values
    assert outcome.judge_failures == len(items) and outcome.judge_failure_rate == pytest.approx(0.25)


def test_the_batch_path_scores_every_item_to_the_same_values_as_the_direct_path(world, tmp_path: Path):
    items, responses, versions, _ = world
    engine = get_engine(f"sqlite:///{tmp_path / 'batch.db'}")
    batch = {"batch": BatchSettings(min_calls=1, poll_seconds=0.01), "journal": SqlBatchJournal(engine)}
    with FakeAnthropicServer(claude_judge.judge_responder, batch_delay=0.05) as server:
        direct = _judge(items, responses, versions, SqlLLMCache(get_engine(f"sqlite:///{tmp_path / 'direct.db'}")),
                        server)
        assert server.count() == 4 * len(items) and server.batches == []
        server.prompt_cache_clear()  # the batch starts as cold as the direct run did
        batched = _judge(items, responses, versions, SqlLLMCache(engine), server, **batch)
        assert server.count() == 4 * len(items), "the batch path made no direct request"
        [judged] = server.batches
        assert Counter(p["tool_choice"]["name"] for _, p in judged.requests) == Counter(
            r.body["tool_choice"]["name"] for r in server.requests)
    assert [(s.item_id, s.values, s.failures) for s in batched.items] == [
        (s.item_id, s.values, s.failures) for s in direct.items]
    assert all("faithfulness" in s.values for s in direct.items)
    assert batched.stats.batched == 4 * len(items) and batched.stats.requests == direct.stats.requests
    assert batched.stats.cost_usd == pytest.approx(direct.stats.cost_usd / 2)


def test_answer_relevance_through_claude_sends_the_question_and_scores_the_statement_verdicts(world):
    items, responses, versions, cache = world
    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        outcome = _judge(items, responses, versions, cache, server)
        bodies = [r.body for r in server.requests if r.body["tool_choice"]["name"] == "record_judge_answer_relevance"]
    assert len(bodies) == len(items) and server.count() == 4 * len(items)
    turns = [b["messages"][0]["content"] for b in bodies]
    for item in items:
        assert (f"Task record_judge_answer_relevance:\n\nQuestion: {item.question}\n\n"
                f"Answer:\n{responses[item.item_id].answer}") in turns
    for body in bodies:  # the steps are static: in the (cached) system instructions, not in the user turn
        instructions = body["system"][0]["text"]
        assert "Step 1: split the question into the parts" in instructions
        assert "whether it addresses the question" in instructions and "noncommittal" in instructions
    # the fake judge answers the one part fully, and one of its two statements addresses the question
    assert [s.values["answer_relevance"] for s in outcome.items] == [0.5] * len(items)


def test_rag_assets_judge_uses_claude_when_the_key_is_set(monkeypatch):
    from rag_assets import judge

    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        scores = judge("What is the maximum file size?", "15 GB.", ["Files can be at most 15 GB."],
                       reference="The maximum file size is 15 GB.")
        tools = Counter(r.body["tool_choice"]["name"] for r in server.requests)
    assert scores["judge"].startswith("anthropic:") and scores["answer_relevance"] == 0.5
    assert tools == Counter({"record_extract_reference_statements": 1, **{t: 1 for t in JUDGE_TOOLS}})


def _wrong_tool(body: dict) -> Reply:
    return Reply(raw_body=json.dumps({
        "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"], "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "some_other_tool", "input": {"claims": []}}],
        "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 10}}))


def _echo_key(body: dict) -> Reply:
    raise RuntimeError(f"internal error for key {API_KEY}")  # the fake's 500 (not retried) carries this message


PROSE = 'Sorry, I cannot judge this answer. For reference the expected format is {"claims": []}'
HOSTILE_FAITHFULNESS = {  # what the judge's faithfulness call gets back, and the failure it is recorded as
    "cut off at max_tokens": (lambda body: Reply(tool_input={"claims": []}, stop_reason="max_tokens"),
                              f"parse_error: the answer was cut off at the token limit (max_tokens "
                              f"{2 * FAITHFULNESS.max_tokens}) and may be incomplete: \"{{'claims': []}}\""),
    "another tool": (_wrong_tool, "parse_error: the answer called the tool 'some_other_tool', not "
                                  "record_judge_faithfulness"),
    "prose with JSON": (lambda body: Reply(text=PROSE),
                        f"parse_error: the answer was not a record_judge_faithfulness tool call: {PROSE!r}"),
    "key echoed in an error": (_echo_key, "api_error: Anthropic API error 500: api_error: responder raised "
                                          "RuntimeError: internal error for key ***"),
}


@pytest.mark.parametrize("case", HOSTILE_FAITHFULNESS)
def test_a_hostile_faithfulness_reply_is_a_recorded_failure_never_a_score(world, case):
    items, responses, versions, cache = world
    items = items[:2]
    hostile, failure = HOSTILE_FAITHFULNESS[case]

    def responder(body: dict) -> Reply:
        tool = body["tool_choice"]["name"]
        return hostile(body) if tool == "record_judge_faithfulness" else claude_judge.judge_responder(body)

    with FakeAnthropicServer(responder) as server:
        outcome = _judge(items, responses, versions, cache, server)
    for scores in outcome.items:
        assert "faithfulness" not in scores.values and "answer_relevance" in scores.values
        assert scores.failures["faithfulness"] == f"judge_faithfulness@3 {failure}"
        assert API_KEY not in json.dumps(scores.failures)
    assert outcome.judge_failures == len(items)
