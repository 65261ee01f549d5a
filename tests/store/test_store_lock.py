"""Two processes on one store: the run lock makes the second wait with one line; a fresh database's
schema is created once however many processes start at the same moment."""

from __future__ import annotations

import time

from tests.store.processes import AWAIT_GO, finish, go, launch, read_line, start_together

# Takes the store's run lock, says so (with the time), holds it until told to let go, says when it did.
HOLD = f"""
import sys, time
from rag_assets.store.engine import get_engine
from rag_assets.store.lock import store_run_lock
engine = get_engine(sys.argv[1])
{AWAIT_GO}
with store_run_lock(engine, lambda line: print("WAIT", line, flush=True), poll_seconds=0.05):
    print("GOT", time.time(), flush=True)
    sys.stdin.readline()
    print("DONE", time.time(), flush=True)
"""

CREATE = f"""
import sys
from sqlalchemy import inspect
from rag_assets.store.engine import get_engine
{AWAIT_GO}
print(len(inspect(get_engine(sys.argv[1])).get_table_names()))
"""


def test_a_second_run_on_the_same_store_waits_for_the_first_with_one_line(store_url: str):
    holder, waiter = launch(HOLD, store_url), launch(HOLD, store_url)
    for process in (holder, waiter):
        read_line(process, "READY")
    go(holder)
    read_line(holder, "GOT")
    go(waiter)  # the holder keeps the lock until the waiter has said that it waits
    line = read_line(waiter, "WAIT")
    assert line.startswith("WAIT another rag-assets run is using the store ") and line.endswith("waiting for it to finish")
    time.sleep(0.3)  # the waiter polls every 0.05 s: it must not get the lock while the holder has it
    go(holder)
    holder_done = float(read_line(holder, "DONE").split()[1])
    waiter_got = float(read_line(waiter, "GOT").split()[1])
    assert waiter_got >= holder_done, "the second ran only after the first released the store"
    go(waiter)
    assert "WAIT" not in finish(holder) + finish(waiter), "one line, said once"


def test_processes_creating_a_fresh_schema_at_once_all_succeed(store_url: str):
    counts = start_together(CREATE, [(store_url,)] * 4)
    assert len({count.strip() for count in counts}) == 1 and int(counts[0]) > 10


# Holds the run lock (checked every 0.05 s) until told to let go; says when it let go.
HOLD_CHECKED = HOLD.replace("poll_seconds=0.05)", "poll_seconds=0.05, check_seconds=0.05)")


def _lock_holders(admin, database: str) -> list[int]:
    with admin.cursor() as cursor:
        cursor.execute("SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                       "WHERE l.locktype = 'advisory' AND l.granted AND d.datname = %s", (database,))
        return [pid for (pid,) in cursor.fetchall()]


def test_the_run_lock_is_taken_again_when_postgresql_terminates_its_connection():
    import psycopg2

    from tests.conftest import PG_HOST, PG_PORT, PG_USER, postgres_database, postgres_url

    with postgres_database() as name:
        holder = launch(HOLD_CHECKED, postgres_url(name))
        read_line(holder, "READY")
        go(holder)
        read_line(holder, "GOT")
        admin = psycopg2.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres")
        admin.autocommit = True
        try:
            [first] = _lock_holders(admin, name)
            with admin.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", (first,))
            deadline = time.monotonic() + 120  # a bound for a broken keeper, not an expected duration
            while _lock_holders(admin, name) in ([], [first]) and time.monotonic() < deadline:
                time.sleep(0.05)
            again = _lock_holders(admin, name)
            assert len(again) == 1 and again != [first], "the lock is held again, on a new connection"
            go(holder)
            read_line(holder, "WAIT the connection holding the store's run lock (postgresql+psycopg2://")
            read_line(holder, "DONE")
            out, err = holder.communicate(timeout=300)
            assert holder.returncode == 0 and "Traceback" not in err, err[-3000:]
            assert _lock_holders(admin, name) == [], "let go at the end"
        finally:
            admin.close()
