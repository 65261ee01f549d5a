"""The whole lifecycle in the real `dagster dev`, driven only through the webserver's GraphQL API
and the folders a user touches (the corpus and the curation inbox): sensors, automation, checks."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT
from tests.e2e.dagster_server import DagsterDev

# Bounds on each wait, not expected durations: every wait polls for the whole condition it asserts, so
# a generous bound costs nothing when the server is quick and keeps a loaded machine (two CPU-bound
# processes on two cores take about twice as long as the idle figures in the test's printed timings)
# from failing a working lifecycle.
STEP_TIMEOUT = 600
EVALUATION_CHECKS = {"evaluation_thresholds", "evaluation_regression", "judge_failure_budget"}
GOLDEN_SET_CHECKS = {"golden_set_quality", "golden_set_pinned", "golden_set_statements"}


@pytest.mark.slow
def test_corpus_to_evaluation_and_a_corpus_change_through_the_webserver(tmp_path: Path):
    corpus, curation = tmp_path / "corpus", tmp_path / "curation"
    shutil.copytree(PROJECT_ROOT / "data" / "corpus", corpus)
    env = {"RAG_ASSETS_HOME": str(tmp_path / "home"), "RAG_ASSETS_CORPUS_ROOT": str(corpus),
           "RAG_ASSETS_CURATION_ROOT": str(curation), "RAG_ASSETS_SENSOR_INTERVAL": "5",
           "RAG_ASSETS_PRODUCTION_LOGS": str(tmp_path / "production_logs"),  # none: production has its own tests
           "ANTHROPIC_API_KEY": None, "RAG_ASSETS_DATABASE_URL": None}
    timings: dict[str, float] = {}
    started = time.monotonic()

    def lap(name: str) -> None:
        timings[name] = round(time.monotonic() - started, 1)

    def checks_of(asset: str, materialization: dict, names: set[str]) -> dict[str, bool] | None:
        """The results of every check in ``names`` executed in the run of ``materialization``, once all are in."""
        results = dagster.check_results(asset, materialization["partition"], run_id=materialization["runId"])
        return results if set(results) == names else None

    with DagsterDev(PROJECT_ROOT, env) as dagster:
        lap("server up")
        sensors = dagster.sensors()
        for name in ("corpus_sensor", "curation_inbox_sensor", "rag_assets_automation", "run_failure_alerts"):
            assert sensors[name] == "RUNNING", sensors
        assert dagster.schedules()["reevaluation_schedule"] == "RUNNING"

        (version,) = dagster.wait_for(lambda: dagster.partitions("corpus_versions") or None, STEP_TIMEOUT,
                                      "the corpus sensor to add a partition")
        snapshot = dagster.wait_for(lambda: dagster.latest_materialization("corpus_snapshot", version), STEP_TIMEOUT,
                                    "the corpus snapshot")
        assert snapshot["metadata"]["documents"] == 49
        dagster.wait_for(lambda: dagster.latest_materialization("curation_queue", version), STEP_TIMEOUT,
                         "automation to generate candidates and write the review queue")
        lap("snapshot, candidates and queue by sensor and automation")

        inbox = curation / "inbox"
        inbox.mkdir(parents=True, exist_ok=True)
        review = PROJECT_ROOT / "data" / "curation" / "sample" / f"review-{version}.csv"
        shutil.copyfile(review, inbox / review.name)

        def scored() -> dict | None:
            evaluation = dagster.latest_materialization("evaluation", version)
            return evaluation if evaluation and evaluation["metadata"].get("golden_version", 0) >= 1 else None

        evaluation = dagster.wait_for(scored, STEP_TIMEOUT, "the reviewed file to flow to an evaluation")
        lap("review imported, golden set, answers and evaluation")
        golden_set = dagster.latest_materialization("golden_set", version)
        golden = golden_set["metadata"]
        assert golden["items"] == 48 and golden["golden_version"] == 1
        meta = evaluation["metadata"]
        assert meta["judge"].startswith("offline") and 0.9 <= meta["faithfulness"] <= 1.0
        assert meta["items"] == 48 and meta["rag_errors"] == 0
        checks = dagster.wait_for(lambda: checks_of("evaluation", evaluation, EVALUATION_CHECKS), STEP_TIMEOUT,
                                  "every check of the evaluation's run (recorded just after its materialization)")
        assert checks == dict.fromkeys(EVALUATION_CHECKS, True)
        checks = dagster.wait_for(lambda: checks_of("golden_set", golden_set, GOLDEN_SET_CHECKS), STEP_TIMEOUT,
                                  "every check of the golden set's run")
        assert checks == dict.fromkeys(GOLDEN_SET_CHECKS, True)
        assert not any(path.name == review.name for path in inbox.iterdir()), "the file left the inbox"

        limits = corpus / "v2" / "limits.md"
        limits.write_text(limits.read_text().replace("15 GB", "20 GB"))
        new_version = dagster.wait_for(
            lambda: next((p for p in dagster.partitions("corpus_versions") if p != version), None), STEP_TIMEOUT,
            "a new corpus partition after the document changed")
        changed = dagster.wait_for(lambda: dagster.latest_materialization("golden_set", new_version), STEP_TIMEOUT,
                                   "the golden set of the new corpus version")["metadata"]
        assert changed["stale_new"] >= 1 and changed["stale_total"] == changed["stale_new"]
        assert changed["items"] == 48 - changed["stale_new"]
        snapshot = dagster.latest_materialization("corpus_snapshot", new_version)["metadata"]
        assert snapshot["documents_changed"] == 1
        dagster.wait_for(lambda: dagster.latest_materialization("evaluation", new_version), STEP_TIMEOUT,
                         "an evaluation of the new corpus version")
        lap("corpus change: new partition, stale items, new evaluation")
    assert not dagster.running()
    print(f"\ne2e timings (s since start): {timings}")
