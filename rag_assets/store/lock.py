"""One lifecycle run at a time per store.

Two ``rag-assets run`` on one store would race for the same natural keys (a snapshot's version id,
a candidate id) and one would die of a raw IntegrityError. The run holds a store-level lock
instead; a second run says so in one line and waits until the first is done. The lock lives
where the store lives, so it also holds between machines that share a PostgreSQL store:
- PostgreSQL: a session advisory lock on a dedicated connection (released when it closes, also
  when the process is killed);
- SQLite: ``flock`` on a file beside the database (released by the kernel when the process ends).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import Engine

#: The advisory lock key of the lifecycle run (any constant the project owns).
RUN_LOCK_KEY = 0x7261675F72756E  # "rag_run"
#: The advisory lock key that serialises creating the schema on a fresh database.
SCHEMA_LOCK_KEY = 0x7261675F736368  # "rag_sch"


@contextmanager
def store_run_lock(engine: Engine, announce: Callable[[str], None] = print, poll_seconds: float = 1.0) -> Iterator[None]:
    """Hold the store's run lock for the block; if another process holds it, ``announce`` one line and wait."""
    waiting = (f"another rag-assets run is using the store {engine.url.render_as_string(hide_password=True)}; "
               "waiting for it to finish")
    if engine.dialect.name == "sqlite":
        with _file_lock(Path(engine.url.database).with_suffix(".run.lock"), lambda: announce(waiting), poll_seconds):
            yield
        return
    with engine.connect() as conn:
        _wait(lambda: conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({RUN_LOCK_KEY})").scalar(),
              lambda: announce(waiting), poll_seconds)
        conn.commit()
        try:
            yield
        finally:
            conn.exec_driver_sql(f"SELECT pg_advisory_unlock({RUN_LOCK_KEY})")
            conn.commit()


def _wait(acquire: Callable[[], bool], announce: Callable[[], None], poll_seconds: float) -> None:
    """Try ``acquire`` until it succeeds, announcing the wait once."""
    if acquire():
        return
    announce()
    while not acquire():
        time.sleep(poll_seconds)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def _file_lock(path: Path, announce: Callable[[], None], poll_seconds: float) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _wait(lambda: _try_flock(fd), announce, poll_seconds)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
