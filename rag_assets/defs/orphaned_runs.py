"""Runs whose process died: a ``rag-assets run`` killed with -9 (or by the OOM killer, or a power cut)
leaves its run STARTED in Dagster for ever, because no run launcher watches an in-process run and
run monitoring can only check workers a launcher started.

The CLI tags each run with its host and process id; before it starts new runs it marks FAILED every
STARTED run of this host whose process is gone. (A reused pid keeps a dead run STARTED until that
process ends too: conservative, never a live run failed.)
"""

from __future__ import annotations

import os
import socket

import dagster as dg

PID_TAG, HOST_TAG = "rag_assets/pid", "rag_assets/host"


def process_tags() -> dict[str, str]:
    """The tags that name the process running a run."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def fail_orphaned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark FAILED the STARTED runs of this host whose process no longer exists; returns their ids."""
    started = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED],
                                                      tags={HOST_TAG: socket.gethostname()}))
    failed = []
    for run in started:
        pid = run.tags.get(PID_TAG, "")
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            instance.report_run_failed(run, f"the rag-assets process {pid} running it is gone (killed?); "
                                            "nothing after its last finished step was kept")
            failed.append(run.run_id)
    return failed
