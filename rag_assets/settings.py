"""The one home of configuration read from the environment.

Dagster resources and the CLI both resolve their defaults here, so an environment variable has
one meaning everywhere. Values that may carry secrets (the database URL) are read at run time
from the environment and never copied into Dagster config, which the UI displays.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.errors import ConfigError
from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP

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
REPORT_URL_ENV = "RAG_ASSETS_REPORT_URL"
JUDGE_MIN_KAPPA_ENV = "RAG_ASSETS_JUDGE_MIN_KAPPA"
JUDGE_SEVERITY_ENV = "RAG_ASSETS_JUDGE_CALIBRATION_SEVERITY"
MIN_OVERLAP_ENV = "RAG_ASSETS_EVIDENCE_MIN_OVERLAP"
PROBE_SAMPLE_ENV = "RAG_ASSETS_PROBE_SAMPLE"
PROBE_MIN_PASS_RATE_ENV = "RAG_ASSETS_PROBE_MIN_PASS_RATE"

DEFAULT_HOME = ".rag_assets"
DEFAULT_CORPUS_ROOT = "data/corpus"
DEFAULT_CURATION_ROOT = "data/curation"
DEFAULT_PRODUCTION_LOGS = "data/production_logs"
DEFAULT_PRODUCTION_START = "2026-01-01"
SQLITE_FILE_NAME = "rag_assets.db"


def bad_value(name: str, shown: str, expected: str, example: str) -> ConfigError:
    """The one-line message of every bad setting or option: the variable (or ``--option``, which argparse also
    takes as ``--option=value``), its value, what it takes, an example."""
    return ConfigError(f"{name}={shown} is not {expected}; for example {name}={example}")


def checked_iso_date(name: str, value: str) -> str:
    """``value`` when it is an ISO date; else the one-line error naming ``name`` (a variable or a defs.yaml field)."""
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise bad_value(name, repr(value), "an ISO date (YYYY-MM-DD)", DEFAULT_PRODUCTION_START) from None
    return value


def checked_cron(name: str, value: str) -> str:
    """``value`` when it is a cron expression Dagster accepts (asked of a schedule, its public judge of cron
    strings); else the one-line error naming ``name``. The schedule targets a selection object: the string
    ``"*"`` is parsed by Dagster's selection grammar, which warns on the terminal of every command."""
    import dagster as dg

    try:
        dg.ScheduleDefinition(name="cron_check", cron_schedule=value, target=dg.AssetSelection.all())
    except dg.DagsterInvalidDefinitionError:
        raise bad_value(name, repr(value), "a cron expression", "'0 6 * * *' (or @daily)") from None
    return value


def _env_number(env: Mapping[str, str], name: str, kind: Callable[[str], float], accepts: Callable[[float], bool],
                example: str, expected: str) -> float | None:
    """The variable's number, None when unset; a value ``kind`` cannot read or ``accepts`` refuses stops with
    the one-line error naming variable, value and an example."""
    value = env.get(name)
    if not value:
        return None
    try:
        number = kind(value)
    except ValueError:
        raise bad_value(name, repr(value), expected, example) from None
    if not accepts(number):
        raise bad_value(name, repr(value), expected, example)
    return number


def _positive_number(env: Mapping[str, str], name: str, kind: Callable[[str], float], example: str,
                     expected: str) -> float | None:
    return _env_number(env, name, kind, lambda number: number > 0, example, expected)


def _checked_database_url(value: str) -> str:
    """A URL SQLAlchemy can open (``postgres://`` is not one: it says ``postgresql+psycopg2://``) with a
    driver that is installed: a bare ``postgresql://`` means psycopg 3 to SQLAlchemy, while the project
    ships psycopg2 (``postgresql+psycopg2://``).

    The value is shown with its password masked, or not at all when it does not parse.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    example = "postgresql+psycopg2://user:password@host:5432/db"
    try:
        url = make_url(value)
    except ArgumentError:
        raise bad_value(DATABASE_URL_ENV, "(not shown)", "a SQLAlchemy URL", example) from None
    shown = repr(url.render_as_string(hide_password=True))
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        raise bad_value(DATABASE_URL_ENV, shown, "a SQLAlchemy URL with a known dialect", example) from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        raise bad_value(DATABASE_URL_ENV, shown, f"usable here: its driver {exc.name or dialect.driver} is not installed",
                   example) from None
    return value


def _checked_report_url(value: str) -> str:
    """An fsspec URL whose protocol is known and whose package is installed. Only the protocol is shown:
    the rest of the URL may hold a user and password (ftp://, sftp://)."""
    from fsspec import get_filesystem_class
    from fsspec.core import split_protocol

    protocol = split_protocol(value)[0] or "file"
    shown, example = repr(f"{protocol}://..."), "s3://bucket/reports (or file:///srv/reports)"
    try:
        get_filesystem_class(protocol)
    except ValueError:
        raise bad_value(REPORT_URL_ENV, shown, "a URL with a protocol fsspec knows", example) from None
    except ImportError as exc:
        raise bad_value(REPORT_URL_ENV, shown, f"usable here ({exc})", example) from None
    return value


def _checked_celery_broker(value: str) -> str:
    """A broker URL celery can reach: Redis or AMQP (the backend defaults depend on which)."""
    if not value.startswith(("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://")):
        raise bad_value(CELERY_BROKER_ENV, "(not shown: it may hold a password)", "a redis:// or amqp:// URL",
                   "redis://host:6379/0")
    return value


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
            database_url=_checked_database_url(env[DATABASE_URL_ENV]) if env.get(DATABASE_URL_ENV) else None,
            production_logs=Path(env.get(PRODUCTION_LOGS_ENV) or DEFAULT_PRODUCTION_LOGS).expanduser().absolute(),
        )

    @staticmethod
    def sensor_interval(default: int, environ: Mapping[str, str] | None = None) -> int:
        """Seconds between sensor ticks; RAG_ASSETS_SENSOR_INTERVAL lowers it (tests, demos)."""
        env = os.environ if environ is None else environ
        seconds = _positive_number(env, SENSOR_INTERVAL_ENV, int, "30", "a whole number of seconds above 0")
        return int(seconds) if seconds else default

    @staticmethod
    def production_start(environ: Mapping[str, str] | None = None) -> str:
        """First day of the production_sample partitions (ISO date); fixed when the code location loads."""
        value = (os.environ if environ is None else environ).get(PRODUCTION_START_ENV) or DEFAULT_PRODUCTION_START
        return checked_iso_date(PRODUCTION_START_ENV, value)

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
            raise bad_value(MAX_COST_ENV, repr(value), "a number of US dollars >= 0", "10")
        return amount

    @staticmethod
    def alert_webhook(environ: Mapping[str, str] | None = None) -> str | None:
        value = (os.environ if environ is None else environ).get(ALERT_WEBHOOK_ENV) or None
        if value and not value.startswith(("http://", "https://")):
            raise bad_value(ALERT_WEBHOOK_ENV, "(not shown: it may hold a token)", "an http(s) URL",
                       "https://hooks.example.com/T000/B000")
        return value

    @staticmethod
    def report_url(environ: Mapping[str, str] | None = None) -> str | None:
        """Where reports are also stored for browsers (any fsspec URL: s3://bucket/prefix, file:///...).

        Its protocol is checked here, so a typo stops the command before the evaluation, not after it."""
        value = (os.environ if environ is None else environ).get(REPORT_URL_ENV) or None
        return _checked_report_url(value) if value else None

    @staticmethod
    def evaluation_cron(environ: Mapping[str, str] | None = None) -> str:
        value = (os.environ if environ is None else environ).get(EVALUATION_CRON_ENV) or "0 6 * * *"
        return checked_cron(EVALUATION_CRON_ENV, value)

    @staticmethod
    def llm_requests_per_minute(environ: Mapping[str, str] | None = None) -> int | None:
        """A per-process pace for LLM requests, or None for no pace."""
        env = os.environ if environ is None else environ
        value = _positive_number(env, LLM_RPM_ENV, int, "50", "a whole number of requests per minute above 0")
        return int(value) if value else None

    @staticmethod
    def judge_min_kappa(default: float, environ: Mapping[str, str] | None = None) -> float:
        """The least Cohen's kappa of the judge with the experts the judge_agreement check accepts."""
        kappa = _env_number(os.environ if environ is None else environ, JUDGE_MIN_KAPPA_ENV, float,
                            lambda number: 0.0 <= number <= 1.0, str(default), "a number between 0 and 1")
        return default if kappa is None else kappa

    @staticmethod
    def evidence_min_overlap(environ: Mapping[str, str] | None = None) -> float:
        """The share of the shorter of a context and an evidence span that they must share for the context
        to hit it (RAG_ASSETS_EVIDENCE_MIN_OVERLAP, default 0.5): the retrieval figures and re-pinning both
        count with it."""
        share = _env_number(os.environ if environ is None else environ, MIN_OVERLAP_ENV, float,
                            lambda number: 0.0 < number <= 1.0, "0.5", "a number above 0 and at most 1")
        return DEFAULT_MIN_OVERLAP if share is None else share

    @staticmethod
    def probe_sample(environ: Mapping[str, str] | None = None) -> int | None:
        """How many items the judge probes take at most (RAG_ASSETS_PROBE_SAMPLE; None: the default of
        ``scoring.probes``); fewer when the probes' calls would pass 15% of the evaluation's."""
        size = _env_number(os.environ if environ is None else environ, PROBE_SAMPLE_ENV, int,
                           lambda number: number >= 1, "20", "a whole number of at least 1")
        return None if size is None else int(size)

    @staticmethod
    def probe_min_pass_rate(environ: Mapping[str, str] | None = None) -> float | None:
        """The pass rate each judge probe must reach for the judge_probes check to pass
        (RAG_ASSETS_PROBE_MIN_PASS_RATE; None: the default of ``scoring.probes``)."""
        return _env_number(os.environ if environ is None else environ, PROBE_MIN_PASS_RATE_ENV, float,
                           lambda number: 0.0 <= number <= 1.0, "0.9", "a number from 0 to 1")

    @staticmethod
    def judge_calibration_severity(environ: Mapping[str, str] | None = None) -> str:
        """WARN (the default) or ERROR: how a failed judge_agreement check counts."""
        value = (os.environ if environ is None else environ).get(JUDGE_SEVERITY_ENV) or "WARN"
        if value.upper() not in ("WARN", "ERROR"):
            raise bad_value(JUDGE_SEVERITY_ENV, repr(value), "WARN or ERROR", "ERROR")
        return value.upper()

    @staticmethod
    def celery_broker(environ: Mapping[str, str] | None = None) -> str | None:
        """The celery broker's URL (RAG_ASSETS_CELERY_BROKER), None: a process per step."""
        value = (os.environ if environ is None else environ).get(CELERY_BROKER_ENV) or None
        return _checked_celery_broker(value) if value else None

    @property
    def store_url(self) -> str:
        """The store's SQLAlchemy URL: PostgreSQL (or any URL) when set, else SQLite in home."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / SQLITE_FILE_NAME}"


def environment_problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every environment variable that holds a value the project cannot use, one line each.

    The CLI asks this before it writes anything, so a typo stops it at once with a line naming the
    variable, the value and an example instead of a traceback half-way through a run.
    """
    readers: list[Callable[[], object]] = [
        lambda: Settings.from_env(environ), lambda: Settings.sensor_interval(30, environ),
        lambda: Settings.production_start(environ), lambda: Settings.evaluation_cron(environ),
        lambda: Settings.alert_webhook(environ), lambda: Settings.llm_requests_per_minute(environ),
        lambda: Settings.judge_min_kappa(0.6, environ), lambda: Settings.judge_calibration_severity(environ),
        lambda: Settings.max_cost_usd(environ), lambda: Settings.report_url(environ),
        lambda: Settings.celery_broker(environ), lambda: Settings.evidence_min_overlap(environ)]
    problems = []
    for read in readers:
        try:
            read()
        except ConfigError as exc:
            problems.append(str(exc))
    return problems
