"""The error budget on rag_answers blocks a broken system before it is scored, through Dagster."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.freshness import stale_selection
from rag_assets.defs.jobs import build_lifecycle_job
from rag_assets.defs.lifecycle import BUNDLED
from tests.defs.lifecycle import check_evaluations, current_version, metadata, run_job, stage_sample_review


def _system(target: str) -> dict:
    return {"resources": {"rag": {"config": {"kind": "callable", "target": target, "timeout_seconds": 5}}}}


def test_unknown_snapshot_ids_on_every_item_fail_the_budget_and_the_lifecycle_stops_before_evaluation(
        project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        result = run_job(instance, "lifecycle", version, _system("tests.fakes.rag_systems:unknown_ids"),
                         expect_success=False)
        rag = metadata(result, "rag_answers")
        assert rag["system"] == "tests.fakes.rag_systems:unknown_ids"
        assert rag["answered"] == 0 and rag["errors"] == rag["items"] > 0
        checks = check_evaluations(result)
        assert checks["rag_answers_pinned"].passed, "every item has its error record"
        budget = checks["rag_answers_error_budget"]
        assert not budget.passed
        assert budget.description.startswith(f"{rag['items']} of {rag['items']} items errored (100.0%, budget 5.0%); "
                                             f"unknown_chunks x{rag['items']}, e.g. ")
        assert (f"retrieved[0].chunk_id '0000000000000000', retrieved[1].chunk_id '0000000000000001', "
                "retrieved[2].chunk_id '0000000000000002', retrieved[3].chunk_id '0000000000000003', "
                f"retrieved[4].chunk_id '0000000000000004': not a chunk of corpus version {version} (") in budget.description
        materialized = {e.step_materialization_data.materialization.asset_key.to_user_string()
                        for e in result.get_asset_materialization_events()}
        assert "rag_answers" in materialized and "evaluation" not in materialized
        stale = stale_selection(instance, defs, build_lifecycle_job(BUNDLED).selection, version)
        assert "rag_answers" in {key.to_user_string() for key in stale}, (
            "answers that errored are asked again by a plain re-run: an outage did not fail the budget for good")


def test_a_raised_budget_lets_the_same_run_through(project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        config = _system("tests.fakes.rag_systems:unknown_ids")
        config["ops"] = {"rag_answers_rag_answers_error_budget": {"config": {"max_error_rate": 1.0}}}
        result = run_job(instance, "lifecycle", version, config, expect_success=False)
        assert check_evaluations(result)["rag_answers_error_budget"].passed
        assert "evaluation" in {e.step_materialization_data.materialization.asset_key.to_user_string()
                                for e in result.get_asset_materialization_events()}
