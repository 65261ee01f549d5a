"""The one home of configuration read from the environment.

Dagster resources and the CLI both resolve their defaults here, so an environment variable has
one meaning everywhere. Values that may carry secrets (the database URL) are read at run time
from the environment and never copied into Dagster config, which the UI displays.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.errors import ConfigError

HOME_ENV = "RAG_ASSETS_HOME"
DATABASE_URL_ENV = "RAG_ASSETS_DATABASE_URL"
CORPUS_ROOT_ENV = "RAG_ASSETS_CORPUS_ROOT"
CURATION_ROOT_ENV = "RAG_ASSETS_CURATION_ROOT"
SENSOR_INTERVAL_ENV = "RAG_ASSETS_SENSOR_INTERVAL"
EVALUATION_CRON_ENV = "RAG_ASSETS_EVALUATION_CRON"
ALERT_WEBHOOK_ENV = "RAG_ASSETS_ALERT_WEBHOOK"
PRODUCTION_LOGS_ENV = "RAG_ASSETS_PRODUCTION_LOGS"
PRODUCTION_START_ENV = "RAG_ASSETS_PRODUCTION_START"
LLM_RPM_ENV = "RAG_ASSETS_LLM_RPM"
MAX_COST_ENV = "RAG_ASSETS_MAX_COST_USD"
CELERY_BROKER_ENV = "RAG_ASSETS_CELERY_BROKER"
CELERY_BACKEND_ENV = "RAG_ASSETS_CELERY_BACKEND"

DEFAULT_HOME = ".rag_assets"
DEFAULT_CORPUS_ROOT = "data/corpus"
DEFAULT_CURATION_ROOT = "data/curation"
DEFAULT_PRODUCTION_LOGS = "data/production_logs"
DEFAULT_PRODUCTION_START = "2026-01-01"
SQLITE_FILE_NAME = "rag_assets.db"


@dataclass(frozen=True)
class Settings:
    """Where the project keeps its state and what it reads by default."""

    home: Path
    corpus_root: Path
    curation_root: Path
    database_url: str | None = None
    production_logs: Path = field(default_factory=lambda: Path(DEFAULT_PRODUCTION_LOGS).absolute())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            home=Path(env.get(HOME_ENV) or DEFAULT_HOME).expanduser().absolute(),
            corpus_root=Path(env.get(CORPUS_ROOT_ENV) or DEFAULT_CORPUS_ROOT).expanduser().absolute(),
            curation_root=Path(env.get(CURATION_ROOT_ENV) or DEFAULT_CURATION_ROOT).expanduser().absolute(),
            database_url=env.get(DATABASE_URL_ENV) or None,
            production_logs=Path(env.get(PRODUCTION_LOGS_ENV) or DEFAULT_PRODUCTION_LOGS).expanduser().absolute(),
        )

    @staticmethod
    def sensor_interval(default: int, environ: Mapping[str, str] | None = None) -> int:
        """Seconds between sensor ticks; RAG_ASSETS_SENSOR_INTERVAL lowers it (tests, demos)."""
        value = (os.environ if environ is None else environ).get(SENSOR_INTERVAL_ENV)
        return int(value) if value else default

    @staticmethod
    def production_start(environ: Mapping[str, str] | None = None) -> str:
        """First day of the production_sample partitions (ISO date); fixed when the code location loads."""
        return (os.environ if environ is None else environ).get(PRODUCTION_START_ENV) or DEFAULT_PRODUCTION_START

    @staticmethod
    def max_cost_usd(environ: Mapping[str, str] | None = None) -> float | None:
        """The default budget of a run in USD (RAG_ASSETS_MAX_COST_USD); None: no limit."""
        value = (os.environ if environ is None else environ).get(MAX_COST_ENV)
        if not value:
            return None
        try:
            amount = float(value)
        except ValueError:
            amount = -1.0
        if not amount >= 0:
            raise ConfigError(f"{MAX_COST_ENV} must be a number of US dollars >= 0, got {value!r}")
        return amount

    @staticmethod
    def alert_webhook(environ: Mapping[str, str] | None = None) -> str | None:
        return (os.environ if environ is None else environ).get(ALERT_WEBHOOK_ENV) or None

    @staticmethod
    def evaluation_cron(environ: Mapping[str, str] | None = None) -> str:
        return (os.environ if environ is None else environ).get(EVALUATION_CRON_ENV) or "0 6 * * *"

    @property
    def store_url(self) -> str:
        """The store's SQLAlchemy URL: PostgreSQL (or any URL) when set, else SQLite in home."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / SQLITE_FILE_NAME}"
