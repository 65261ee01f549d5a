"""Every step that may call the LLM is in the one pool that deploy/dagster.yaml limits, and only those."""

from rag_assets.definitions import defs
from rag_assets.defs.resources import LLM_POOL

#: steps that hold the llm resource only to plan, validate config or label results: they send no request
PLANNING_STEPS = {"plan_generation_shards", "plan_rag_shards", "plan_judge_shards", "score_evaluation"}


def test_exactly_the_steps_that_call_the_llm_are_in_the_anthropic_pool():
    for job, expected in (("lifecycle", {"generate_shard", "golden_set", "answer_shard", "judge_shard", "judge_probes",
                                         "ab_comparison"}),
                          ("production", {"production_sample"})):
        ops = list(defs.resolve_job_def(job).graph.iterate_op_defs())
        pooled = {op.name for op in ops if op.pool == LLM_POOL}
        with_llm = {op.name for op in ops if "llm" in op.required_resource_keys}
        assert pooled == expected and pooled == with_llm - PLANNING_STEPS
        assert {op.pool for op in ops} <= {LLM_POOL, None}
