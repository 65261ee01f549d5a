"""Alembic's environment for the store: migrations run on the connection the engine hands over
(``config.attributes["connection"]``), inside its transaction, so an upgrade is all or nothing and
serialised with other processes by the engine's schema lock (see ``rag_assets.store.migrate``)."""

from alembic import context
from sqlmodel import SQLModel

from rag_assets.store import tables  # noqa: F401  (registers the tables on SQLModel.metadata)

context.configure(connection=context.config.attributes["connection"], target_metadata=SQLModel.metadata,
                  render_as_batch=True, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
