"""Every step that may call the LLM is in the one pool that deploy/dagster.yaml limits, and only those."""

from rag_assets.definitions import defs
from rag_assets.defs.resources import LLM_POOL


def test_exactly_the_steps_with_the_llm_resource_are_in_the_anthropic_pool():
    nodes = defs.resolve_job_def("lifecycle").graph.node_defs
    pooled = {node.name for node in nodes if node.pool == LLM_POOL}
    with_llm = {node.name for node in nodes if "llm" in node.required_resource_keys}
    assert pooled == with_llm == {"question_candidates", "golden_set", "rag_answers", "evaluation", "ab_comparison"}
    assert {node.pool for node in nodes} == {LLM_POOL, None}
