"""The celery executor on the machine's Redis: a worker this test starts runs the evaluation's shard steps."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES
from rag_assets.settings import CELERY_BROKER_ENV
from tests.conftest import PROJECT_ROOT
from tests.defs.celery_job import KEY_PREFIX_ENV, evaluation_on_celery, isolation
from tests.defs.lifecycle import build_golden_set, metadata

REDIS = ("127.0.0.1", 6379)
SHARD_SIZE = 3


def _redis_answers() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture
def celery_worker(project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen]:
    """A celery worker process on Redis with this test's environment, stopped warm (SIGTERM) at the end."""
    if not _redis_answers():
        pytest.skip(f"no Redis answers on {REDIS[0]}:{REDIS[1]}")
    prefix = f"rag_assets_test_{uuid.uuid4().hex[:12]}:"
    broker = f"redis://{REDIS[0]}:{REDIS[1]}/0"
    monkeypatch.setenv(CELERY_BROKER_ENV, broker)
    monkeypatch.setenv(KEY_PREFIX_ENV, prefix)
    config_dir = tmp_path / "celery_config"
    config_dir.mkdir()
    settings = {"broker_url": broker, "result_backend": broker, **isolation(prefix)}
    (config_dir / "dagster_celery_config.py").write_text("".join(f"{k} = {v!r}\n" for k, v in settings.items()))
    log = tmp_path / "worker.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(config_dir), str(PROJECT_ROOT)])}
    with log.open("w") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker", "--loglevel=INFO", "--pool=prefork",
             "--concurrency=2", "--without-gossip", "--without-mingle", "-n", f"{prefix.rstrip(':')}@%h"],
            cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text():
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        yield worker
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0, log.read_text()[-3000:]
        with pytest.raises(ProcessLookupError):  # no pool process outlived the worker
            os.killpg(worker.pid, 0)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


@pytest.mark.slow
def test_the_evaluation_shards_run_on_a_celery_worker_and_score_like_an_in_process_run(celery_worker, tmp_path: Path):
    # new shards (judged on the worker, none kept yet) and another alpha: a new evaluation, not the same one again
    config = {"ops": {"evaluation": {"config": {"shard_size": SHARD_SIZE, "alpha": 0.01}}}}
    repo = RESOURCES["store"].evaluations()
    with dg.instance_for_test() as instance:
        version = build_golden_set(instance)  # then the answers and their evaluation in-process, one shard
        local = metadata(dg.materialize([rag_answers, evaluation], partition_key=version, instance=instance,
                                        resources=RESOURCES), "evaluation")
        with dg.execute_job(dg.reconstructable(evaluation_on_celery), instance=instance, run_config=config,
                            tags={"dagster/partition": version}) as result:
            assert result.success
            remote = metadata(result, "evaluation")
            on_worker = {e.step_key for e in instance.all_logs(result.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
                         if e.message.endswith("in celery worker")}
    shards = [f"evaluation.judge_shard[shard_{i:04d}]" for i in range(-(-local["items"] // SHARD_SIZE))]
    assert len(shards) > 1 and set(shards) <= on_worker
    assert {"evaluation.plan_judge_shards", "evaluation.score_evaluation"} <= on_worker
    assert remote["evaluation_id"] != local["evaluation_id"]
    assert repo.item_values(remote["evaluation_id"]) == repo.item_values(local["evaluation_id"])
    assert repo.get(remote["evaluation_id"]).aggregates == repo.get(local["evaluation_id"]).aggregates
