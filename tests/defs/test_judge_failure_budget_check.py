"""The judge_failure_budget check through Dagster, with a hostile Claude judge: it fails faithfulness calls only, on
a few items, so that the failures are a small share of all judge calls but a large one of faithfulness' items."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg

from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES, LLMResource
from tests.defs.lifecycle import check_evaluations, current_version, metadata, run_job, stage_sample_review
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder

_JOBS = dg.Definitions(assets=[rag_answers, evaluation], resources=RESOURCES,
                       jobs=[dg.define_asset_job("evaluate", selection="evaluation")])
EVALUATE = _JOBS.resolve_job_def("evaluate")


def _hostile(questions: set[str]):
    """The fake Claude judge, but a faithfulness call on one of ``questions`` gets an answer outside its schema."""

    def respond(body: dict) -> Reply:
        if body["tool_choice"]["name"] == "record_judge_faithfulness":
            asked = re.search(r"^Question: (.+)$", str(body["messages"][0]["content"]), flags=re.MULTILINE)
            if asked and asked.group(1) in questions:
                return Reply(tool_input={"unexpected": True})
        return judge_responder(body)

    return respond


def _evaluate(instance: dg.DagsterInstance, version: str, judge: LLMResource) -> dg.ExecuteInProcessResult:
    """Score the newest RAG run with ``judge``; severity WARN, so that the run goes on whatever the gates say."""
    return EVALUATE.execute_in_process(partition_key=version, instance=instance, resources={**RESOURCES, "llm": judge},
                                       raise_on_error=False,
                                       run_config={"ops": {"evaluation": {"config": {"severity": "WARN"}}}})


def test_failures_on_one_metrics_items_fail_the_check_though_few_of_all_calls(project_env: Path):
    """The tester's case: 48 items (42 answerable, 6 adversarial), faithfulness calls failed on 7 factual items and
    nothing else failed: 7 of 48 faithfulness items (14.6%), under 5% of all judge calls."""
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        run_job(instance, "lifecycle", version)
        store = RESOURCES["store"]
        items = store.golden().version_items(store.golden().latest_version([version]).number)
        assert (len(items), sum(i.question_type == "adversarial" for i in items)) == (48, 6)
        failing = sorted(i.question for i in items if i.question_type == "factual")[:7]
        with FakeAnthropicServer(_hostile(set(failing))) as server:
            result = _evaluate(instance, version, LLMResource(provider="anthropic", api_key=API_KEY,
                                                              base_url=server.base_url, max_retries=0))
    meta = metadata(result, "evaluation")
    assert meta["judge_failures"] == 7 and meta["judge_failure_rate"] < 0.05, "under the budget pooled"
    check = check_evaluations(result)["judge_failure_budget"]
    assert not check.passed
    assert check.description.startswith("faithfulness: 7 of 48 items (14.6%) not judged; budget 5%; ")
    # the metrics that read the faithfulness call's answer lost the same items
    assert "citation_accuracy: 7 of 48 items (14.6%) not judged; budget 5%" in check.description
    assert check.description.endswith(f"(all judge calls: {meta['judge_failure_rate']:.1%} failed); first error: "
                                      "judge_faithfulness@3 parse_error: the answer does not match the schema: "
                                      "claims: Field required"), "the judge's first error, as on the terminal"
    per_metric = check.metadata["per_metric"].value
    assert "| faithfulness | 7 | 48 | 14.6% |" in per_metric and "| answer_relevance | 0 | 42 | 0.0% |" in per_metric
    stored = RESOURCES["store"].evaluations().get(meta["evaluation_id"])
    assert not stored.passed and stored.gates["judge_failures"][0] == {"metric": "faithfulness", "failed": 7,
                                                                       "items": 48}


def test_with_no_failure_the_check_passes(project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        run_job(instance, "lifecycle", version)
        with FakeAnthropicServer(_hostile(set())) as server:
            result = _evaluate(instance, version, LLMResource(provider="anthropic", api_key=API_KEY,
                                                              base_url=server.base_url, max_retries=0))
    check = check_evaluations(result)["judge_failure_budget"]
    assert check.passed and check.description == (
        "every judge metric within the budget of 5% of its items not judged (all judge calls: 0.0% failed)")
