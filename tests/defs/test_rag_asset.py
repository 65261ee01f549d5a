"""rag_answers through Dagster: the reference system after a review, and a user's broken callable."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.checks import rag_answers_pinned
from rag_assets.defs.resources import RESOURCES, RagSystemResource
from tests.defs.lifecycle import check_evaluations, current_version, metadata, run_job, stage_sample_review
from tests.fakes.rag_systems import KNOWN_CHUNK


def test_the_lifecycle_answers_every_golden_item_with_the_reference_system(project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        result = run_job(instance, "lifecycle", version)
        golden, rag = metadata(result, "golden_set"), metadata(result, "rag_answers")
        assert rag["items"] == golden["items"] == rag["answered"] + rag["errors"]
        assert (rag["system"], rag["golden_version"], rag["errors"]) == ("reference", golden["golden_version"], 0)
        assert rag["llm"].startswith("offline")
        assert rag["latency_p95_ms"] >= rag["latency_p50_ms"] > 0
        assert check_evaluations(result)["rag_answers_pinned"].passed


def test_a_broken_user_system_gives_item_errors_the_run_finishes_and_the_check_passes(project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        run_job(instance, "lifecycle", version)
        KNOWN_CHUNK["id"] = RESOURCES["store"].corpus().snapshot_chunks(version)[0].chunk_id
        broken = RagSystemResource(kind="callable", target="tests.fakes.rag_systems:by_question", timeout_seconds=1)
        result = dg.materialize([rag_answers, rag_answers_pinned], partition_key=version, instance=instance,
                                resources={**RESOURCES, "rag": broken})
        rag = metadata(result, "rag_answers")
        assert rag["system"] == "tests.fakes.rag_systems:by_question" and rag["answered"] == rag["items"] > 0
        assert check_evaluations(result)["rag_answers_pinned"].passed
        down = RagSystemResource(kind="http", target="http://127.0.0.1:9/none", retries=0, timeout_seconds=1)
        result = dg.materialize([rag_answers, rag_answers_pinned], partition_key=version, instance=instance,
                                resources={**RESOURCES, "rag": down})
        rag = metadata(result, "rag_answers")
        assert rag["errors"] == rag["items"] and "http_error" in rag["errors_by_kind"]
        assert check_evaluations(result)["rag_answers_pinned"].passed, "every item has its error record"
