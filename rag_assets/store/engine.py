"""Engines for the store: SQLite in the project home by default, PostgreSQL (or any SQLAlchemy
URL) when ``RAG_ASSETS_DATABASE_URL`` is set. The schema is brought to the newest alembic revision on
first use (``rag_assets.store.migrate``).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, ExceptionContext, make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import create_engine

from rag_assets.errors import StoreUnavailable
from rag_assets.store.lock import SCHEMA_LOCK_KEY
from rag_assets.store.migrate import upgrade_schema

T = TypeVar("T")

# Well under SQLite's 32,766 bound variables and PostgreSQL's 65,535 parameters per statement.
IN_BATCH = 5000
#: How long a SQLite write waits for another process's write transaction before it gives up. The store's
#: transactions are short (the longest, a bulk insert of a big snapshot, takes a few seconds) and two
#: CLI runs never overlap (the run lock), so a lock held for longer than this is a process that hangs
#: or a person's open session: waiting longer only delays the one-line message that names it.
SQLITE_LOCK_WAIT_SECONDS = 15
#: Free bytes below which a failed write is taken for a full disk (SQLite in WAL mode may report the
#: full disk as a plain I/O error when it cannot grow its shared-memory file).
NEARLY_FULL_BYTES = 1 << 20


def batched(items: Iterable[T], size: int = IN_BATCH) -> Iterator[Sequence[T]]:
    """Yield lists of at most ``size`` items, for IN clauses and bulk inserts of any length."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy, not pysqlite, decides when to BEGIN
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_LOCK_WAIT_SECONDS * 1000}")
    _write_ahead_log(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _write_ahead_log(cursor: sqlite3.Cursor) -> None:
    """Switch the database to WAL, retrying for as long as a busy wait would: on a fresh file that other processes
    open at the same moment, SQLite refuses the switch at once, without its busy wait, where waiting could deadlock
    with another connection's write (four processes creating one store together failed so, once, under load)."""
    deadline = time.monotonic() + SQLITE_LOCK_WAIT_SECONDS
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@cache
def get_engine(url: str) -> Engine:
    """One engine per URL per process, with the schema at the newest revision."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": SQLITE_LOCK_WAIT_SECONDS})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        event.listen(engine, "handle_error", _sqlite_unavailable)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    _create_schema(engine)
    return engine


def _create_schema(engine: Engine) -> None:
    """Migrate the schema, one process at a time: two processes on a fresh database would both see
    it unmigrated and the second CREATE would fail. SQLite serialises on BEGIN IMMEDIATE,
    PostgreSQL on a transaction-scoped advisory lock."""
    with write_transaction(engine) as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK_KEY})")
        upgrade_schema(conn)


def _holders(path: Path) -> list[str]:
    """The other processes that have ``path`` open (Linux /proc; empty where it cannot be read)."""
    found = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        if fd_dir.parent.name == str(os.getpid()):
            continue
        try:
            if any(os.readlink(fd) == str(path) for fd in fd_dir.iterdir()):
                arguments = (fd_dir.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                command = " ".join(arguments.decode(errors="replace").split())
                found.append(f"pid {fd_dir.parent.name} ({command[:60]})")
        except OSError:  # a process that ended meanwhile, or one of another user
            continue
    return found


def database_problem(error: BaseException, database: str | Path, what: str = "the store") -> str | None:
    """One line for a SQLite error that no retry of the transaction can mend, naming ``database`` (the file,
    or the folder of Dagster's own databases) and what to do; None for any other error."""
    original = getattr(error, "orig", error)
    if not isinstance(original, sqlite3.Error):
        return None
    extended = getattr(original, "sqlite_errorcode", 0) or 0
    code = extended & 0xFF  # the primary result code
    path = Path(database).absolute()
    folder = path if path.is_dir() else path.parent
    free = shutil.disk_usage(folder).free if folder.exists() else 0
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and free < NEARLY_FULL_BYTES):
        return (f"cannot write {what} {path}: the disk is full ({free:,} bytes free in {folder}); free space there or "
                f"set RAG_ASSETS_HOME to a folder on another disk")
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return (f"{what} {path} is damaged ({original}); restore it from a backup, or move it away to start "
                f"an empty store")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        return (f"cannot write {what} {path} ({original}); make {folder} writable or set RAG_ASSETS_HOME to a "
                f"writable folder")
    if extended == sqlite3.SQLITE_BUSY:  # the busy wait ran out (BUSY_SNAPSHOT and the like are retried instead)
        holders = _holders(path) if path.is_file() else []
        by = f" by {', '.join(holders)}" if holders else ""
        return (f"{what} {path} stayed locked{by} for {SQLITE_LOCK_WAIT_SECONDS} s; let that process finish "
                f"or stop it, then run again")
    if code == sqlite3.SQLITE_IOERR:
        return f"cannot read or write {what} {path}: {original}; check the disk that holds it"
    return None


def _sqlite_unavailable(context: ExceptionContext) -> None:
    """SQLAlchemy's error hook on a SQLite store: an error that names no file (``database disk image is
    malformed``) becomes :class:`StoreUnavailable`, one line naming the database and what to do."""
    database = context.dialect and context.engine and context.engine.url.database
    problem = database_problem(context.original_exception, database) if database else None
    if problem:
        raise StoreUnavailable(problem) from None


def _sqlite_begin(conn: Connection) -> None:
    """Writers take SQLite's write lock up front (BEGIN IMMEDIATE): a deferred transaction that
    reads and then writes can fail at once with 'database is locked' when another process writes."""
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("rag_write") else "BEGIN")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction that will write: all or nothing, and safe against concurrent writers."""
    with engine.connect() as conn:
        conn.execution_options(rag_write=True)
        with conn.begin():
            yield conn


def retry_transaction(engine: Engine, work: Callable[[Connection], T], attempts: int = 8) -> T:
    """Run ``work`` in a write transaction, again from the start if a concurrent writer won a race
    (a unique number taken, a lock timeout). Each attempt is all or nothing."""
    for attempt in range(attempts):
        try:
            with write_transaction(engine) as conn:
                return work(conn)
        except (IntegrityError, OperationalError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.02 * 2**attempt)
    raise AssertionError("unreachable")


def describe_url(url: str) -> str:
    """The URL as it may be shown to a user: the password is masked."""
    return make_url(url).render_as_string(hide_password=True)
