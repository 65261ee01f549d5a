"""The store's schema is owned by alembic migrations (``rag_assets/store/migrations``).

Every engine brings its database to the newest revision on first use, one process at a time (the
engine's schema lock). A store made before migrations existed has the tables of the baseline
revision and no ``alembic_version`` table: it is stamped as the baseline and upgraded in place, so
its golden versions, decisions and scores stay as they were.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).with_name("migrations")
BASELINE = "0001"
# A table every store made before migrations has (the first one a snapshot writes).
_PRE_MIGRATION_TABLE = "corpus_snapshot"


def migration_config(conn: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    return config


def head_revision() -> str:
    """The newest schema revision this code knows."""
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def current_revision(conn: Connection) -> str | None:
    """The revision the database is at (None: never migrated)."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade_schema(conn: Connection) -> None:
    """Bring the database on ``conn`` to the head revision, inside the caller's transaction."""
    config = migration_config(conn)
    if current_revision(conn) is None and inspect(conn).has_table(_PRE_MIGRATION_TABLE):
        command.stamp(config, BASELINE)
    if current_revision(conn) != head_revision():
        command.upgrade(config, "head")
