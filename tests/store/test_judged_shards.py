"""Judged shards kept by fingerprint: what scoring reads makes the fingerprint, the outcome comes back
equal, a shard with a failed judge call is kept only for the merge of the run that judged it, and a kept
outcome used again counts as cached."""

from __future__ import annotations

from dataclasses import replace

import dagster as dg
import pytest

from rag_assets.corpus.models import ChunkRef
from rag_assets.defs.assets.evaluation import JudgePlan
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.results import LLMStats
from rag_assets.rag.models import Citation, RagResponse, RetrievedChunk
from rag_assets.scoring.evaluate import EvaluationOutcome, ItemScores
from rag_assets.scoring.reuse import item_digest
from rag_assets.store.engine import get_engine
from rag_assets.store.judged_shard_repository import SqlJudgedShards

ITEM = GoldenItem("q-1", 2, "factual", "What does X do?", "X does Y.", (ChunkRef("c-1", "h-1"),), "cv-1",
                  reference_statements=("X does Y.",))
RESPONSE = RagResponse("q-1", "X does Y [c-1].", retrieved=(RetrievedChunk("c-1", "", 0.9, 1),),
                       citations=(Citation("X does Y", "c-1"),), latency_ms=12.5, input_tokens=100, output_tokens=20,
                       cost_usd=0.001, extra={"declined": False})


def _outcome() -> EvaluationOutcome:
    scored = ItemScores("q-1", 2, "factual", values={"faithfulness": 0.75, "recall@5": 1.0},
                        failures={"context_recall": "judge_context_recall@1 parse_error: no statements"},
                        hallucinations={"fabrication": 1}, fabricated_citations=1,
                        claims=[{"claim": "X does Y", "verdict": "grounded", "supporting_chunk_ids": ["c-1"]}],
                        useful={"c-1": True}, outputs={"judge_faithfulness@3": {"claims": []}})
    errored = ItemScores("q-2", 1, "adversarial", rag_error="timeout")
    stats = LLMStats("anthropic", "claude-x", calls=4, requests=5, cache_hits=1, cache_misses=3, retries=1,
                     repairs=1, input_tokens=900, output_tokens=120, cost_usd=0.0123, estimates=1,
                     estimated_cost_usd=0.05, by_template={"judge_faithfulness@3": 2, "judge_relevance@2": 2})
    return EvaluationOutcome([scored, errored], stats, judge_calls=4, judge_failures=0, k=5)


def test_an_item_digest_covers_what_scoring_reads_and_nothing_else():
    digest = item_digest(ITEM, RESPONSE)
    unscored = replace(RESPONSE, latency_ms=99.0, input_tokens=1, output_tokens=2, cost_usd=None, extra={"x": 1})
    assert item_digest(ITEM, unscored) == digest
    assert item_digest(ITEM, replace(RESPONSE, answer="X does Z.")) != digest
    assert item_digest(ITEM, replace(RESPONSE, retrieved=(RetrievedChunk("c-2", "", 0.9, 1),))) != digest
    assert item_digest(ITEM, replace(RESPONSE, citations=())) != digest
    assert item_digest(replace(ITEM, reference_statements=("X does Z.",)), RESPONSE) != digest
    assert item_digest(replace(ITEM, revision=3), RESPONSE) != digest
    assert item_digest(ITEM, None) != digest


def test_a_kept_outcome_comes_back_equal_and_counts_as_answered_by_the_cache_when_used_again(store_url: str):
    shards = SqlJudgedShards(get_engine(store_url))
    outcome = _outcome()
    shards.keep("f" * 64, outcome, "run-1")
    shards.keep("f" * 64, replace(outcome, k=3), "run-2")  # one fingerprint, one outcome: the first stays
    assert shards.stored(["f" * 64, "e" * 64]) == {"f" * 64}
    assert shards.outcomes(["f" * 64, "e" * 64], "run-3") == {"f" * 64: outcome}
    replayed = outcome.replayed()
    assert replayed.items == outcome.items and (replayed.judge_calls, replayed.judge_failures) == (4, 0)
    assert replayed.stats == LLMStats("anthropic", "claude-x", calls=4, cache_hits=4, estimates=1,
                                      estimated_cost_usd=0.0, by_template=outcome.stats.by_template)


def test_a_shard_with_a_failed_judge_call_is_kept_only_for_the_merge_of_the_run_that_judged_it(store_url: str):
    shards = SqlJudgedShards(get_engine(store_url))
    failed = replace(_outcome(), judge_failures=1)
    shards.keep("a" * 64, replace(failed, k=3), "run-1")
    shards.keep("a" * 64, failed, "run-1")  # the shard step again in a re-execution: its newest outcome counts
    assert shards.stored(["a" * 64]) == set()
    assert shards.outcomes(["a" * 64], "run-2") == {}
    assert shards.outcomes(["a" * 64], "run-1") == {"a" * 64: failed}
    shards.release(["a" * 64], "run-1")  # its merge is done
    assert shards.outcomes(["a" * 64], "run-1") == {}
    shards.keep("a" * 64, _outcome(), "run-2")  # judged again without failures: kept for every run
    shards.release(["a" * 64], "run-2")
    assert shards.outcomes(["a" * 64], "run-1") == {"a" * 64: _outcome()}


def test_the_merge_takes_kept_outcomes_as_cached_and_this_runs_as_judged_in_shard_order(store_url: str):
    shards = SqlJudgedShards(get_engine(store_url))
    shards.keep("f" * 64, _outcome(), "run-0")
    failed = replace(_outcome(), judge_failures=1)
    shards.keep("d" * 64, failed, "run-1")
    plan = JudgePlan("rag-1", ("d" * 64, "f" * 64), frozenset({"f" * 64}), "inputs")
    assert plan.outcomes(shards, "run-1") == [failed, _outcome().replayed()]


def test_an_outcome_deleted_after_the_plan_stops_the_merge_with_a_message(store_url: str):
    shards = SqlJudgedShards(get_engine(store_url))
    shards.keep("f" * 64, _outcome(), "run-1")
    plan = JudgePlan("rag-1", ("f" * 64, "d" * 64), frozenset({"f" * 64, "d" * 64}), "inputs")
    with pytest.raises(dg.Failure, match=r"^1 judge-shard outcomes this run planned to merge are not in the store "
                                         r"\(e\.g\. dddddddddddd\): deleted after the plan; run the evaluation again"):
        plan.outcomes(shards, "run-1")
