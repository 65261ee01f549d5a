"""ab_comparison through Dagster: a system against itself is approved; a weaker variant is not."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from rag_assets.defs.assets.ab import ab_comparison
from rag_assets.defs.resources import RESOURCES
from tests.defs.lifecycle import check_evaluations, current_version, metadata, run_job, stage_sample_review


def _compare(instance, version: str, candidate: dict):
    config = {"ops": {"ab_comparison": {"config": {"current": {"name": "reference", "k": 5}, "candidate": candidate}}}}
    return dg.materialize([ab_comparison], partition_key=version, instance=instance, resources=RESOURCES,
                          run_config=config)


def test_a_system_against_itself_is_approved_and_a_k1_variant_is_not(project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        run_job(instance, "lifecycle", version)
        same = _compare(instance, version, {"name": "reference-again", "k": 5})
        meta = metadata(same, "ab_comparison")
        assert meta["recommendation"] == "APPROVE" and meta["delta_faithfulness"] == 0.0
        assert check_evaluations(same)["ab_not_rejected"].passed
        weaker = _compare(instance, version, {"name": "reference-k1", "k": 1})
        meta = metadata(weaker, "ab_comparison")
        assert meta["recommendation"] in ("REJECT", "REVIEW")
        assert meta["delta_recall@5"] < 0 and "significant regression: recall@5: delta" in meta["comparison"]
        assert check_evaluations(weaker)["ab_not_rejected"].description.startswith(meta["recommendation"])
