"""Two processes on one store: the run lock makes the second wait with one line; a fresh database's
schema is created once however many processes start at the same moment."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.conftest import PROJECT_ROOT

HOLD = """
import sys, time
from rag_assets.store.engine import get_engine
from rag_assets.store.lock import store_run_lock
url, start, hold = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
engine = get_engine(url)
time.sleep(max(0.0, start - time.time()))
with store_run_lock(engine, lambda line: print("WAIT", line, flush=True), poll_seconds=0.05):
    print("GOT", time.time(), flush=True)
    time.sleep(hold)
    print("DONE", time.time(), flush=True)
"""

CREATE = """
import sys, time
from sqlalchemy import inspect
url, start = sys.argv[1], float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
from rag_assets.store.engine import get_engine
print(len(inspect(get_engine(url)).get_table_names()))
"""


def _run_together(code: str, url: str, *extra: tuple[str, ...]) -> list[str]:
    start = str(time.time() + 3)
    processes = [subprocess.Popen([sys.executable, "-c", code, url, start, *args], cwd=PROJECT_ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for args in extra]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-3000:]
        outputs.append(out)
    return outputs


def test_a_second_run_on_the_same_store_waits_for_the_first_with_one_line(store_url: str):
    first, second = _run_together(HOLD, store_url, ("1.5",), ("1.5",))
    waiter, holder = (second, first) if "WAIT" in second else (first, second)
    assert "WAIT" not in holder
    (line,) = [line for line in waiter.splitlines() if line.startswith("WAIT")]
    assert line.startswith("WAIT another rag-assets run is using the store ") and line.endswith("waiting for it to finish")
    holder_done = float(next(line for line in holder.splitlines() if line.startswith("DONE")).split()[1])
    waiter_got = float(next(line for line in waiter.splitlines() if line.startswith("GOT")).split()[1])
    assert waiter_got >= holder_done, "the second ran only after the first released the store"


def test_processes_creating_a_fresh_schema_at_once_all_succeed(store_url: str):
    counts = _run_together(CREATE, store_url, (), (), (), ())
    assert len({count.strip() for count in counts}) == 1 and int(counts[0]) > 10
