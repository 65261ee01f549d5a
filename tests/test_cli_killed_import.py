"""A ``rag-assets run`` killed (SIGKILL) between a review import's commit and Dagster's record of it: the
next run recognises the applied file by its hash and builds the golden set with the experts' decisions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.curation.inbox import file_sha256
from rag_assets.defs.resources import RESOURCES
from tests.conftest import PROJECT_ROOT
from tests.test_cli import checkout_curation  # noqa: F401  (a fixture)


def _wait_for(barrier: Path, child: subprocess.Popen) -> None:
    """Until the child reached the barrier; fails at once if it ended first (a generous bound, not a timing)."""
    deadline = time.monotonic() + 600
    while not barrier.exists():
        assert child.poll() is None, f"the run ended (exit {child.returncode}) before its review import"
        assert time.monotonic() < deadline, "the run did not reach its review import"
        time.sleep(0.1)


def test_a_run_killed_right_after_its_review_import_builds_the_golden_set_on_the_next_run(
        project_env: Path, checkout_curation: Path, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("DAGSTER_HOME", "")  # the CLI's own instance in the home, for this process and the child
    assert main(["run", "--no-review", "--no-production"]) == 0, "nothing reviewed yet: the candidates are queued"
    assert "pending=50" in capsys.readouterr().out
    (review,) = (checkout_curation / "sample").glob("review-cv-*.csv")
    barrier = tmp_path / "imported"
    command = [sys.executable, "-m", "tests.cli_killed_at_import", str(barrier), "run", "--no-production"]
    child = subprocess.Popen(command, cwd=PROJECT_ROOT, env=os.environ.copy(), start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(barrier, child)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert RESOURCES["store"].curation().is_applied(file_sha256(review)), "the decisions were committed"
    assert Path(barrier.read_text(encoding="utf-8")) == checkout_curation / "processed" / review.name
    assert list((checkout_curation / "inbox").iterdir()) == []

    assert main(["run", "--no-production"]) == 0
    out = capsys.readouterr().out
    assert "applied already" in out
    facts = {line.split()[0]: line for line in out.splitlines() if line.startswith(("curation_queue", "golden_set"))}
    assert "(earlier run " not in facts["golden_set"] and "items=48, added=48" in facts["golden_set"]
    assert "(earlier run " not in facts["curation_queue"] and facts["curation_queue"].endswith("pending=0"), \
        "every candidate was decided"
