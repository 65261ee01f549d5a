"""Alembic migrations of the store (see rag_assets.store.migrate)."""
