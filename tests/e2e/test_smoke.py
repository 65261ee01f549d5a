"""Smoke test of the deployment: the real ``dagster dev``, driven only through its GraphQL API.

It proves the pieces a user relies on are wired together: the code location loads, both sensors
run, the corpus sensor turns the corpus folder into a partition and its snapshot on its own, and the
``lifecycle`` job launches for that partition and runs to an end in its own process.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.dagster_server import DagsterDev, port_open

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ASSETS = ["corpus_snapshot", "question_candidates", "curation_queue", "curated_decisions", "golden_set",
          "rag_answers", "evaluation"]
SENSORS = ["corpus_sensor", "curation_inbox_sensor"]
AUTOMATION_SENSOR = "rag_assets_automation"


class Phases:
    """Wall-clock time per phase, printed as it goes (run pytest with -s to see it)."""

    def __init__(self) -> None:
        self.started = self.last = time.monotonic()

    def done(self, phase: str) -> None:
        now = time.monotonic()
        print(f"[e2e] {phase}: {now - self.last:.1f}s (total {now - self.started:.1f}s)", flush=True)
        self.last = now


@pytest.mark.slow
def test_dagster_dev_snapshots_the_corpus_and_runs_the_lifecycle(tmp_path: Path, sample_corpus: Path):
    env = {
        "RAG_ASSETS_HOME": str(tmp_path / "home"),
        "RAG_ASSETS_CORPUS_ROOT": str(sample_corpus),
        "RAG_ASSETS_CURATION_ROOT": str(tmp_path / "curation"),
        "RAG_ASSETS_DATABASE_URL": None,  # the store is SQLite in the temporary home
        "ANTHROPIC_API_KEY": None,  # offline generator and judge, whatever the developer's shell has
        "RAG_ASSETS_SENSOR_INTERVAL": "5",  # sensors tick every 5 s instead of 15-30 s
    }
    phases = Phases()
    with DagsterDev(PROJECT_ROOT, env) as server:
        phases.done("start dagster dev (webserver answers, code location loaded)")
        port = server.port

        assert server.server_info().get("dagster_webserver_version"), server.server_info()
        sensors = server.sensors()
        print(f"[e2e] sensors: {sensors}; schedules: {server.schedules()}")
        assert set(SENSORS) <= set(sensors), sensors
        assert set(ASSETS) <= set(server.asset_nodes()), server.asset_nodes()
        # Declarative automation would run the same assets for the new partition alongside the launched
        # job; this test checks the launch, so only the lifecycle run may write them.
        if AUTOMATION_SENSOR in sensors:
            assert server.set_sensor(AUTOMATION_SENSOR, running=False) == "STOPPED"
        phases.done("server_info, sensors and asset nodes")

        # The corpus sensor's first tick comes soon after the daemon starts; the snapshot run it
        # requests then goes through the daemon's run queue.
        version = server.wait_for(lambda: next(iter(server.partitions("corpus_versions")), None), 180,
                                  "the corpus sensor to add a corpus_versions partition")
        snapshot = server.wait_for(lambda: server.latest_materialization("corpus_snapshot", version), 180,
                                   f"a corpus_snapshot materialization of {version}")
        print(f"[e2e] corpus version {version}: {snapshot['metadata']['documents']} documents, "
              f"{snapshot['metadata']['chunks']} chunks")
        assert snapshot["partition"] == version
        assert snapshot["metadata"]["documents"] == 49
        assert snapshot["metadata"]["corpus_version"] == version
        sensor_runs = [r for r in server.runs() if r["tags"].get("dagster/partition") == version]
        assert any(r["tags"].get("rag_assets/trigger") == "corpus_change" for r in sensor_runs), sensor_runs
        phases.done("corpus sensor: partition and snapshot")

        run_id = server.launch_job("lifecycle", partition=version)
        status = server.wait_for_run(run_id, 150)
        # Without a reviewed file the golden set is empty and its blocking checks may fail the run.
        print(f"[e2e] lifecycle run {run_id}: {status}; steps: {server.step_statuses(run_id)}; "
              f"failed steps: {server.step_errors(run_id)}; golden_set checks: "
              f"{server.check_results('golden_set', version)}")
        assert status in {"SUCCESS", "FAILURE"}, status
        assert server.step_statuses(run_id).get("question_candidates") == "SUCCESS"
        candidates = server.latest_materialization("question_candidates", version)
        assert candidates is not None and candidates["runId"] == run_id, candidates
        phases.done("lifecycle run launched over GraphQL and finished")

    assert not server.running()
    assert not port_open(port), f"port {port} still open after dagster dev stopped"
    phases.done("stop dagster dev")
