"""One store, one lifecycle instance: the first instance that opens a store claims it, any other is refused."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from rag_assets.errors import ConfigError
from rag_assets.store.engine import describe_url, write_transaction
from rag_assets.store.tables import StoreOwnerRow

OWNER = StoreOwnerRow.__table__


def claim_store(engine: Engine, instance: str) -> None:
    """Records ``instance`` as the store's owner on first use; ConfigError when another instance owns it."""
    with write_transaction(engine) as conn:
        owners = conn.execute(select(OWNER.c.instance)).scalars().all()
        if not owners:
            conn.execute(insert(OWNER).values(instance=instance))
            return
    if instance not in owners:
        def shown(name: str) -> str:
            return repr(name) if name else "the unnamed (RAG_ASSETS_*) instance"

        raise ConfigError(f"the store {describe_url(engine.url.render_as_string(hide_password=False))} belongs to "
                          f"{shown(owners[0])}; instance {shown(instance)} needs a database of its own "
                          "(database_url_env naming another URL, or none for SQLite in its home)")
