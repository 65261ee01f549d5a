"""Killed runs end as FAILED: run monitoring is on in the CLI's instance and in deploy/dagster.yaml,
and the CLI fails the STARTED runs of its own processes that are gone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import dagster as dg
import pytest
import yaml

from rag_assets.cli.commands import _instance
from rag_assets.defs.orphaned_runs import HOST_TAG, PID_TAG, fail_orphaned_runs
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT


def test_the_instance_the_cli_makes_has_run_monitoring_on(project_env: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    settings = Settings.from_env()
    (settings.home / "dagster").mkdir(parents=True)
    (settings.home / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # an earlier CLI's
    instance = _instance(settings)
    try:
        assert instance.root_directory == str(settings.home / "dagster") and "DAGSTER_HOME" not in os.environ
        assert instance.run_monitoring_enabled and instance.run_monitoring_start_timeout_seconds == 180
    finally:
        instance.dispose()


def test_the_deployment_instance_has_run_monitoring_on():
    """(Dagster validates the whole file where tests/deploy/test_postgres_deployment.py runs the lifecycle on it.)"""
    config = yaml.safe_load((PROJECT_ROOT / "deploy" / "dagster.yaml").read_text())
    assert config["run_monitoring"]["enabled"] is True
    assert config["run_monitoring"]["max_resume_run_attempts"] == 0


def test_a_started_run_whose_cli_process_is_gone_is_marked_failed_and_a_live_one_is_not():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with dg.instance_for_test() as instance:
            runs = {}
            for name, pid in (("dead", dead.stdout.strip()), ("live", str(live.pid))):
                run = dg.DagsterRun(job_name="lifecycle", run_id=str(uuid.uuid4()), status=dg.DagsterRunStatus.STARTED,
                                 tags={PID_TAG: pid, HOST_TAG: socket.gethostname()})
                runs[name] = instance.add_run(run).run_id
            assert fail_orphaned_runs(instance) == [runs["dead"]]
            assert instance.get_run_by_id(runs["dead"]).status == dg.DagsterRunStatus.FAILURE
            assert instance.get_run_by_id(runs["live"]).status == dg.DagsterRunStatus.STARTED
    finally:
        live.kill()
        live.wait()
