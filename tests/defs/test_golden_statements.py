"""golden_set's warning when references could not be split into statements: the tester's case, a revoked key, left
the set built with its checks passing and 33 calls failed in its metadata only."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from rag_assets.app.golden_import import import_golden_file
from rag_assets.defs.assets.golden import golden_set
from rag_assets.defs.checks import golden_set_statements
from rag_assets.defs.resources import RESOURCES, LLMResource
from tests.defs.lifecycle import LifecycleRun, check_evaluations, metadata
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder


def test_references_not_split_into_statements_warn_naming_how_many_and_the_first_error(lifecycle_run: LifecycleRun,
                                                                                       tmp_path: Path):
    store = RESOURCES["store"]
    chunks = store.corpus().snapshot_chunks(lifecycle_run.version)[:2]
    team = tmp_path / "team.jsonl"
    team.write_text("".join(json.dumps({"id": f"team-{n}", "user_input": f"What does page {n} say?",
                                        "reference": f"What page {n} says.", "reference_contexts": [chunk.text]}) + "\n"
                            for n, chunk in enumerate(chunks)), encoding="utf-8")
    import_golden_file(store, team, "ragas", None, lambda: lifecycle_run.version)

    def build(server: FakeAnthropicServer) -> dg.ExecuteInProcessResult:
        llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0)
        return dg.materialize([golden_set, golden_set_statements], partition_key=lifecycle_run.version,
                              instance=instance, resources={**RESOURCES, "llm": llm})

    with lifecycle_run.instance() as instance:
        with FakeAnthropicServer(judge_responder, revoked_keys={API_KEY}) as server:
            revoked = build(server)
        shown, check = metadata(revoked, "golden_set"), check_evaluations(revoked)["golden_set_statements"]
        assert shown["llm_api_errors"] == shown["statements_failed"] == 2 and shown["statements_extracted"] == 0
        assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
        assert check.description.startswith(
            f"2 of {shown['items']} items' reference statements could not be extracted (the golden set stores "
            "none for them; evaluations split them again themselves; the next build of the golden set asks them "
            "again); first error: extract_reference_statements@1 api_error: Anthropic "
            "API error 401: authentication_error"), check.description
        with FakeAnthropicServer(judge_responder) as server:
            again = build(server)
        check = check_evaluations(again)["golden_set_statements"]
        assert metadata(again, "golden_set")["statements_extracted"] == 2, "asked again"
        assert check.passed and check.description.startswith("every reference asked was split"), check.description


def test_the_statements_check_without_a_build_or_with_metadata_from_before_it_passes():
    from rag_assets.defs.checks import statements_result

    assert statements_result(None).passed
    before = {"items": dg.MetadataValue.int(5), "statements_extracted": dg.MetadataValue.int(0)}
    assert statements_result(before).passed, "a build from before the figure was recorded"
