"""Engines for the store: SQLite in the project home by default, PostgreSQL (or any SQLAlchemy
URL) when ``RAG_ASSETS_DATABASE_URL`` is set. The schema is brought to the newest alembic revision on
first use (``rag_assets.store.migrate``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import create_engine

from rag_assets.store.lock import SCHEMA_LOCK_KEY
from rag_assets.store.migrate import upgrade_schema

T = TypeVar("T")

# Well under SQLite's 32,766 bound variables and PostgreSQL's 65,535 parameters per statement.
IN_BATCH = 5000


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
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


@cache
def get_engine(url: str) -> Engine:
    """One engine per URL per process, with the schema at the newest revision."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
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
