"""Resources: configuration with defaults from ``rag_assets.settings``.

Values that may hold secrets are never resource config (the UI shows config): the store reads its
URL from the environment variable whose *name* is configured here.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import dagster as dg
from sqlalchemy.engine import Engine

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.settings import DATABASE_URL_ENV, Settings
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import describe_url, get_engine


class StoreResource(dg.ConfigurableResource):
    """The project's database: SQLite under the project home, or the URL in ``database_url_env``."""

    database_url_env: str = DATABASE_URL_ENV
    home: str | None = None

    def settings(self) -> Settings:
        base = Settings.from_env()
        return replace(
            base,
            home=Path(self.home).expanduser().absolute() if self.home else base.home,
            database_url=os.environ.get(self.database_url_env) or None,
        )

    def engine(self) -> Engine:
        return get_engine(self.settings().store_url)

    def describe(self) -> str:
        return describe_url(self.settings().store_url)

    def corpus(self) -> SqlCorpusRepository:
        return SqlCorpusRepository(self.engine())


class CorpusResource(dg.ConfigurableResource):
    """Where the corpus lives and how it is chunked; shared by the snapshot asset and the sensor."""

    root: str | None = None
    target_chars: int = ChunkerConfig.target_chars
    overlap_chars: int = ChunkerConfig.overlap_chars
    min_chars: int = ChunkerConfig.min_chars
    max_file_bytes: int = ChunkerConfig.max_file_bytes

    def resolved_root(self) -> Path:
        return Path(self.root).expanduser().absolute() if self.root else Settings.from_env().corpus_root

    def chunker(self) -> ChunkerConfig:
        return ChunkerConfig(
            target_chars=self.target_chars,
            overlap_chars=self.overlap_chars,
            min_chars=self.min_chars,
            max_file_bytes=self.max_file_bytes,
        )


RESOURCES = {"store": StoreResource(), "corpus": CorpusResource()}
