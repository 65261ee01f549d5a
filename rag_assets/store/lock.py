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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from rag_assets.errors import StoreUnavailable

#: The advisory lock key of the lifecycle run (any constant the project owns).
RUN_LOCK_KEY = 0x7261675F72756E  # "rag_run"
#: The advisory lock key that serialises creating the schema on a fresh database.
SCHEMA_LOCK_KEY = 0x7261675F736368  # "rag_sch"


@contextmanager
def store_run_lock(engine: Engine, announce: Callable[[str], None] = print, poll_seconds: float = 1.0,
                   check_seconds: float = 5.0) -> Iterator[None]:
    """Hold the store's run lock for the block; if another process holds it, ``announce`` one line and wait.

    On PostgreSQL the lock lives as long as its connection: a keeper thread looks at that connection every
    ``check_seconds`` and, when it is gone (a restarted server, ``pg_terminate_backend``), takes the lock
    again on a new one and announces it in one line. If another run took it meanwhile, the keeper says so,
    and the block ends with :class:`RunLockLost` (one line) instead of going on beside that run.
    """
    waiting = (f"another rag-assets run is using the store {engine.url.render_as_string(hide_password=True)}; "
               "waiting for it to finish")
    if engine.dialect.name == "sqlite":
        with _file_lock(Path(engine.url.database).with_suffix(".run.lock"), lambda: announce(waiting), poll_seconds):
            yield
        return
    conn = engine.connect()
    _wait(lambda: _try_advisory_lock(conn), lambda: announce(waiting), poll_seconds)
    keeper = _AdvisoryLockKeeper(engine, conn, announce, check_seconds)
    keeper.start()
    try:
        yield
    finally:
        keeper.release()
    if keeper.lost:
        raise RunLockLost(keeper.lost)


class RunLockLost(StoreUnavailable):
    """The run's connection to PostgreSQL was lost and another run holds the store's run lock now."""


def _try_advisory_lock(conn: Connection) -> bool:
    taken = bool(conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({RUN_LOCK_KEY})").scalar())
    conn.commit()
    return taken


class _AdvisoryLockKeeper(threading.Thread):
    """Keeps the session advisory lock held: when its connection dies, the lock went with it, so it is taken
    again on a new connection (or, when another run has it by then, the loss is recorded in ``lost``)."""

    def __init__(self, engine: Engine, conn: Connection, announce: Callable[[str], None], check_seconds: float) -> None:
        super().__init__(name="rag-assets-run-lock", daemon=True)
        self.engine, self.conn, self.announce, self.check_seconds = engine, conn, announce, check_seconds
        self.stopping = threading.Event()
        self.lost: str | None = None

    def run(self) -> None:
        while not self.stopping.wait(self.check_seconds) and self.lost is None:
            if not self._alive():
                self._take_again()

    def _alive(self) -> bool:
        try:
            self.conn.exec_driver_sql("SELECT 1").scalar()
            self.conn.commit()
        except DBAPIError:
            return False
        return True

    def _take_again(self) -> None:
        self.conn.invalidate()
        try:
            self.conn = self.engine.connect()
            taken = _try_advisory_lock(self.conn)
        except DBAPIError:  # the server is not back yet: look again at the next check
            return
        store = self.engine.url.render_as_string(hide_password=True)
        if taken:
            self.announce(f"the connection holding the store's run lock ({store}) was lost; the lock is held again")
        else:
            self.lost = (f"the connection holding the store's run lock ({store}) was lost and another run took the "
                         "lock meanwhile, so this run went on beside it: check both runs' results")
            self.announce(self.lost)

    def release(self) -> None:
        """Stop keeping the lock and let it go; a connection that is gone released it already."""
        self.stopping.set()
        self.join()
        try:
            self.conn.exec_driver_sql(f"SELECT pg_advisory_unlock({RUN_LOCK_KEY})")
            self.conn.commit()
        except DBAPIError:
            self.conn.invalidate()
        self.conn.close()


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
