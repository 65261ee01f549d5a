"""The one home of configuration read from the environment.

Every variable the package reads is a field of :class:`Settings`, declared once in ``VARIABLES`` with its
meaning, its default and its check; docs/environment.md is generated from that table
(``scripts/environment-reference``). Nothing else in the package reads the environment, and nothing writes it
(tests/test_configuration_rules.py): a command-line option reaches the code as a value, never as a variable.

Values that may carry secrets (the database URL, the webhook, the celery URLs) are left out of the settings'
repr and never copied into Dagster config, which the UI displays; of the API key only its presence is kept.
Variables that a configuration names (an instance's ``database_url_env``, a header's ``${VARIABLE}``) are read
through :func:`environment` when they are used, for the same reason.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
CODE_LOCATION_ENV = "RAG_ASSETS_CODE_LOCATION"
API_KEY_ENV = "ANTHROPIC_API_KEY"
DAGSTER_HOME_ENV = "DAGSTER_HOME"
CI_ENV = "CI"
DAGSTER_DEV_ENV = "DAGSTER_IS_DEV_CLI"

DEFAULT_HOME = ".rag_assets"
DEFAULT_CORPUS_ROOT = "data/corpus"
DEFAULT_CURATION_ROOT = "data/curation"
DEFAULT_PRODUCTION_LOGS = "data/production_logs"
DEFAULT_PRODUCTION_START = "2026-01-01"
DEFAULT_EVALUATION_CRON = "0 6 * * *"
DEFAULT_CODE_LOCATION = "rag_assets.definitions"
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
        raise bad_value(name, repr(value), "a cron expression", f"'{DEFAULT_EVALUATION_CRON}' (or @daily)") from None
    return value


#: How a variable's set, non-empty value becomes its field: (variable name, value) -> field value, or the
#: one-line ConfigError naming the variable.
Reader = Callable[[str, str], Any]


def _number(kind: Callable[[str], float], accepts: Callable[[float], bool], expected: str, example: str) -> Reader:
    """A number ``kind`` reads and ``accepts`` takes."""
    def read(name: str, value: str) -> float:
        try:
            number = kind(value)
        except ValueError:
            raise bad_value(name, repr(value), expected, example) from None
        if not accepts(number):
            raise bad_value(name, repr(value), expected, example)
        return number
    return read


def _text(name: str, value: str) -> str:
    return value


def _folder(name: str, value: str) -> Path:
    return Path(value).expanduser().absolute()


def _flag(name: str, value: str) -> bool:
    return value.lower() in ("true", "1")


def _present(name: str, value: str) -> bool:
    return True


def _module(name: str, value: str) -> str:
    if not all(part.isidentifier() for part in value.split(".")):
        raise bad_value(name, repr(value), "a Python module name", "two_products.definitions")
    return value


def _severity(name: str, value: str) -> str:
    if value.upper() not in ("WARN", "ERROR"):
        raise bad_value(name, repr(value), "WARN or ERROR", "ERROR")
    return value.upper()


def _webhook(name: str, value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise bad_value(name, "(not shown: it may hold a token)", "an http(s) URL", "https://hooks.example.com/T000/B000")
    return value


def _checked_database_url(name: str, value: str) -> str:
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
        raise bad_value(name, "(not shown)", "a SQLAlchemy URL", example) from None
    shown = repr(url.render_as_string(hide_password=True))
    try:
        dialect = url.get_dialect()
    except NoSuchModuleError:
        raise bad_value(name, shown, "a SQLAlchemy URL with a known dialect", example) from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        raise bad_value(name, shown, f"usable here: its driver {exc.name or dialect.driver} is not installed",
                   example) from None
    return value


def _checked_report_url(name: str, value: str) -> str:
    """An fsspec URL whose protocol is known and whose package is installed. Only the protocol is shown:
    the rest of the URL may hold a user and password (ftp://, sftp://)."""
    from fsspec import get_filesystem_class
    from fsspec.core import split_protocol

    protocol = split_protocol(value)[0] or "file"
    shown, example = repr(f"{protocol}://..."), "s3://bucket/reports (or file:///srv/reports)"
    try:
        get_filesystem_class(protocol)
    except ValueError:
        raise bad_value(name, shown, "a URL with a protocol fsspec knows", example) from None
    except ImportError as exc:
        raise bad_value(name, shown, f"usable here ({exc})", example) from None
    return value


def _checked_celery_broker(name: str, value: str) -> str:
    """A broker URL celery can reach: Redis or AMQP (the backend defaults depend on which)."""
    if not value.startswith(("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://")):
        raise bad_value(name, "(not shown: it may hold a password)", "a redis:// or amqp:// URL",
                   "redis://host:6379/0")
    return value


@dataclass(frozen=True)
class Variable:
    """One environment variable: the ``Settings`` field it fills, what it means, and how it is read.

    Unset or empty, the field is ``read(fallback)`` when there is a fallback, else ``unset``; ``when_unset`` is
    how the reference page words the default that has no fallback value.
    """

    name: str
    field: str
    meaning: str
    read: Reader = _text
    fallback: str | None = None
    unset: Any = None
    when_unset: str = "unset"

    @property
    def default(self) -> str:
        """The default as the reference page shows it."""
        return f"`{self.fallback}`" if self.fallback is not None else self.when_unset


def _positive_int(expected: str, example: str) -> Reader:
    return _number(int, lambda number: number > 0, expected, example)


def _share(low_open: bool, expected: str, example: str) -> Reader:
    return _number(float, (lambda n: 0.0 < n <= 1.0) if low_open else (lambda n: 0.0 <= n <= 1.0), expected, example)


VARIABLES: tuple[Variable, ...] = (
    Variable(HOME_ENV, "home", "project state: the SQLite store, reports, indexes, the CLI's Dagster home and event "
             "log; a named instance keeps its own under `<home>/<name>`", _folder, DEFAULT_HOME),
    Variable(DATABASE_URL_ENV, "database_url", "SQLAlchemy URL of the store, e.g. "
             "`postgresql+psycopg2://user:pw@host/db`; read when the store opens and never copied into Dagster "
             "config", _checked_database_url, when_unset="unset (SQLite in the home)"),
    Variable(CORPUS_ROOT_ENV, "corpus_root", "the corpus folder to snapshot (`--corpus` overrides it for one "
             "command)", _folder, DEFAULT_CORPUS_ROOT),
    Variable(CURATION_ROOT_ENV, "curation_root", "review files: `outbox/`, `inbox/`, `processed/`, `rejected/`",
             _folder, DEFAULT_CURATION_ROOT),
    Variable(PRODUCTION_LOGS_ENV, "production_logs", "served-query logs (`*.jsonl`) that `production_sample` "
             "scores", _folder, DEFAULT_PRODUCTION_LOGS),
    Variable(PRODUCTION_START_ENV, "production_start", "first day of the daily `production_sample` partitions",
             checked_iso_date, DEFAULT_PRODUCTION_START),
    Variable(EVALUATION_CRON_ENV, "evaluation_cron", "when the re-evaluation schedule runs (UTC)", checked_cron,
             DEFAULT_EVALUATION_CRON),
    Variable(SENSOR_INTERVAL_ENV, "sensor_interval", "seconds between the ticks of every sensor",
             _positive_int("a whole number of seconds above 0", "30"), when_unset="each sensor's own (30 or 15 s)"),
    Variable(ALERT_WEBHOOK_ENV, "alert_webhook", "URL that receives a JSON POST for every failed run", _webhook),
    Variable(REPORT_URL_ENV, "report_url", "where reports are also stored for browsers: any fsspec URL "
             "(`s3://bucket/prefix`, `file:///srv/reports`)", _checked_report_url),
    Variable(API_KEY_ENV, "anthropic_api_key_set", "use Claude for generation, the reference system's answers and "
             "judging; the key is passed to Dagster as a reference to this variable, never as a value", _present,
             unset=False, when_unset="unset (offline)"),
    Variable(LLM_RPM_ENV, "llm_requests_per_minute", "requests per minute each process sends to one model "
             "([rate limit](deploy.md#one-rate-limit-across-processes-and-workers))",
             _positive_int("a whole number of requests per minute above 0", "50"), when_unset="unset (no bound)"),
    Variable(MAX_COST_ENV, "max_cost_usd", "the most one Dagster run may spend on the LLM, in US dollars; "
             "one `rag-assets run` starts several Dagster runs, each with this cap ([budgets](cost.md))", _number(float, lambda number: number >= 0, "a number of US dollars >= 0", "10"),
             when_unset="unset (no limit)"),
    Variable(JUDGE_MIN_KAPPA_ENV, "judge_min_kappa", "the least Cohen's kappa of the judge with the experts that "
             "the `judge_agreement` check accepts", _share(False, "a number between 0 and 1", "0.6"),
             when_unset="`0.6`"),
    Variable(JUDGE_SEVERITY_ENV, "judge_calibration_severity", "`WARN` or `ERROR`: how a failed `judge_agreement` "
             "check counts", _severity, "WARN"),
    Variable(MIN_OVERLAP_ENV, "evidence_min_overlap", "the share of an evidence span the retrieved contexts must "
             "cover together for it to be found, and of the shorter of a context and an evidence span they must share "
             "for the context to hit it (retrieval figures, and the chunks a repinned item names)",
             _share(True, "a number above 0 and at most 1", "0.5"), str(DEFAULT_MIN_OVERLAP)),
    Variable(PROBE_SAMPLE_ENV, "probe_sample", "the most items the judge probes take from an evaluation (fewer when "
             "the probes would add over 15% of the evaluation's judge calls)",
             _number(int, lambda number: number >= 1, "a whole number of at least 1", "20"), when_unset="`20`"),
    Variable(PROBE_MIN_PASS_RATE_ENV, "probe_min_pass_rate", "the pass rate every judge probe must reach for the "
             "`judge_probes` check to pass", _share(False, "a number from 0 to 1", "0.9"), when_unset="`0.9`"),
    Variable(CELERY_BROKER_ENV, "celery_broker", "run every step on celery workers through this broker, e.g. "
             "`redis://host:6379/0` or `amqp://user:pw@host:5672//` (see [Scale-out](scale-out.md))",
             _checked_celery_broker, when_unset="unset (a process per step)"),
    Variable(CELERY_BACKEND_ENV, "celery_backend", "celery's result backend",
             when_unset="the Redis broker, or `rpc://` for AMQP"),
    Variable(CODE_LOCATION_ENV, "code_location", "the code location the CLI drives: a module whose `defs` holds "
             "`RagEvaluation` instances (`--instance NAME` picks one), importable from the current folder, e.g. "
             "`two_products.definitions` in examples/two_products; `rag-assets ui` starts `dagster dev` on it",
             _module, DEFAULT_CODE_LOCATION),
    Variable(DAGSTER_HOME_ENV, "dagster_home", "Dagster's instance folder", _folder,
             when_unset="`$RAG_ASSETS_HOME/dagster` for the CLI"),
    Variable(CI_ENV, "ci", "set by CI runners (`true`): no progress lines on the terminal", _flag, unset=False),
    Variable(DAGSTER_DEV_ENV, "dagster_dev", "set by `dagster dev` in its processes: no progress lines on its "
             "terminal, which interleaves every run's logs", _present, unset=False),
)


class SettingsError(ConfigError):
    """Every variable that holds a value the project cannot use, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Settings:
    """Every setting the environment gives, read and checked at once (see ``VARIABLES``); secrets out of repr."""

    home: Path
    database_url: str | None = field(repr=False)
    corpus_root: Path
    curation_root: Path
    production_logs: Path
    production_start: str
    evaluation_cron: str
    sensor_interval: int | None
    alert_webhook: str | None = field(repr=False)
    report_url: str | None = field(repr=False)
    anthropic_api_key_set: bool
    llm_requests_per_minute: int | None
    max_cost_usd: float | None
    judge_min_kappa: float | None
    judge_calibration_severity: str
    evidence_min_overlap: float
    probe_sample: int | None
    probe_min_pass_rate: float | None
    celery_broker: str | None = field(repr=False)
    celery_backend: str | None = field(repr=False)
    code_location: str
    dagster_home: Path | None
    ci: bool
    dagster_dev: bool

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings ``environ`` (default: this process's environment) gives; SettingsError naming every
        bad variable otherwise."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        problems: list[str] = []
        for variable in VARIABLES:
            value = env.get(variable.name) or variable.fallback
            try:
                values[variable.field] = variable.read(variable.name, value) if value else variable.unset
            except ConfigError as exc:
                problems.append(str(exc))
        if problems:
            raise SettingsError(problems)
        return cls(**values)

    @property
    def store_url(self) -> str:
        """The store's SQLAlchemy URL: PostgreSQL (or any URL) when set, else SQLite in home."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / SQLITE_FILE_NAME}"


def current_settings() -> Settings:
    """This process's settings. Looking the variables up is cheap; reading and checking them (a cron through
    Dagster, a URL through SQLAlchemy) is not, and is done once per set of values: once per process, since
    nothing in the package writes the environment (a test's ``monkeypatch`` does, and is seen)."""
    return _settings(tuple((variable.name, os.environ.get(variable.name)) for variable in VARIABLES))


@functools.lru_cache(maxsize=4)
def _settings(values: tuple[tuple[str, str | None], ...]) -> Settings:
    return Settings.from_env({name: value for name, value in values if value is not None})


def user_cache_dir() -> Path:
    """The user's cache folder (``XDG_CACHE_HOME``, else ``~/.cache``): for what is the same for every home and
    costly to make (the report's JavaScript bundle), not a setting of this project."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def environment() -> Mapping[str, str]:
    """The environment, to look up a variable a configuration names by its name (an instance's
    ``database_url_env``, a header's ``${VARIABLE}``, ``llm.api_key``) when the value is used, so that a secret
    is never copied into config, and to hand on to a child process."""
    return os.environ
