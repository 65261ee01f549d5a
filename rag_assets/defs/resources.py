"""Resources: configuration with defaults from ``rag_assets.settings``.

A path left unset is the process's setting (``settings.current()``), looked up when it is used. Values that
may hold secrets are never resource config (the UI shows config): the store reads its URL from the
environment variable whose *name* is configured here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import dagster as dg
from sqlalchemy.engine import Engine, make_url

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.curation.inbox import CurationFolders
from rag_assets.curation.models import ReviewLimits
from rag_assets.llm.batch import BatchJournal, BatchSettings
from rag_assets.llm.budget import HOW_TO_RAISE, RUN_LIMIT, Budget, BudgetExceeded, SpendLedger
from rag_assets.llm.client import LLMClient
from rag_assets.llm.factory import DEFAULT_MODEL, answers_offline, make_llm_client
from rag_assets.llm.pricing import DEFAULT_PRICES, Price
from rag_assets.rag.factory import check_system_limits
from rag_assets.rag.http_transport import HEADERS_INSTEAD, refuse_url_credentials
from rag_assets.settings import API_KEY_ENV, DATABASE_URL_ENV, LLM_RPM_ENV, Settings, current_settings, environment
from rag_assets.store.alert_repository import SqlAlertRepository
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.golden_repository import SqlGoldenRepository
from rag_assets.store.judged_shard_repository import SqlJudgedShards
from rag_assets.store.evaluation_repository import SqlEvaluationRepository
from rag_assets.store.production_repository import SqlProductionRepository
from rag_assets.store.rag_repository import SqlRagRepository
from rag_assets.store.engine import describe_url, get_engine
from rag_assets.store.owner import claim_store
from rag_assets.store.llm_batch_repository import SqlBatchJournal
from rag_assets.store.llm_cache_repository import SqlLLMCache
from rag_assets.store.llm_spend_repository import SqlSpendLedger

# The Dagster concurrency pool of every step that may call the LLM. Its limit lives in the instance
# (dagster.yaml `concurrency: pools: default_limit`, or `dagster instance concurrency set anthropic N`)
# and holds across runs, processes and workers; LLMResource.requests_per_minute paces each step.
LLM_POOL = "anthropic"


class StoreResource(dg.ConfigurableResource):
    """The project's database: SQLite under the project home, or the URL in ``database_url_env`` (None: always
    SQLite, as a component instance without a database of its own)."""

    database_url_env: str | None = DATABASE_URL_ENV
    home: str | None = None
    instance: str = ""

    def settings(self) -> Settings:
        base = current_settings()
        return replace(
            base,
            home=Path(self.home).expanduser().absolute() if self.home else base.home,
            database_url=(environment().get(self.database_url_env) or None) if self.database_url_env else None,
        )

    def engine(self) -> Engine:
        """The store's engine, once this process checked that the store belongs to ``instance``."""
        url = self.settings().store_url
        _claimed(url, self.instance)
        return get_engine(url)

    def describe(self) -> str:
        return describe_url(self.settings().store_url)

    def made(self) -> bool:
        """False for a SQLite store whose file is not there yet: a command that only reads says there is nothing
        to read, instead of making an empty store to find out. A server's database is taken to be there."""
        url = make_url(self.settings().store_url)
        return url.get_backend_name() != "sqlite" or not url.database or Path(url.database).exists()

    def corpus(self) -> SqlCorpusRepository:
        return SqlCorpusRepository(self.engine())

    def llm_cache(self) -> SqlLLMCache:
        return SqlLLMCache(self.engine())

    def llm_batches(self) -> SqlBatchJournal:
        return SqlBatchJournal(self.engine())

    def llm_spend(self) -> SqlSpendLedger:
        return SqlSpendLedger(self.engine())

    def candidates(self) -> SqlCandidateRepository:
        return SqlCandidateRepository(self.engine())

    def curation(self) -> SqlCurationRepository:
        return SqlCurationRepository(self.engine())

    def golden(self) -> SqlGoldenRepository:
        return SqlGoldenRepository(self.engine())

    def rag(self) -> SqlRagRepository:
        return SqlRagRepository(self.engine())

    def alerts(self) -> SqlAlertRepository:
        return SqlAlertRepository(self.engine())

    def evaluations(self) -> SqlEvaluationRepository:
        return SqlEvaluationRepository(self.engine())

    def production(self) -> SqlProductionRepository:
        return SqlProductionRepository(self.engine())

    def judged_shards(self) -> SqlJudgedShards:
        return SqlJudgedShards(self.engine())

    def report_dir(self) -> Path:
        return self.settings().home / "reports"

    def index_dir(self) -> Path:
        return self.settings().home / "indexes"

    def golden_export_dir(self, corpus_version: str) -> Path:
        return self.settings().home / "golden" / corpus_version


@functools.cache
def _claimed(url: str, instance: str) -> None:
    claim_store(get_engine(url), instance)


class CorpusResource(dg.ConfigurableResource):
    """Where the corpus lives and how it is chunked; shared by the snapshot asset and the sensor."""

    root: str | None = None
    target_chars: int = ChunkerConfig.target_chars
    overlap_chars: int = ChunkerConfig.overlap_chars
    min_chars: int = ChunkerConfig.min_chars
    max_file_bytes: int = ChunkerConfig.max_file_bytes

    def resolved_root(self) -> Path:
        return Path(self.root).expanduser().absolute() if self.root else current_settings().corpus_root

    def chunker(self) -> ChunkerConfig:
        return ChunkerConfig(
            target_chars=self.target_chars,
            overlap_chars=self.overlap_chars,
            min_chars=self.min_chars,
            max_file_bytes=self.max_file_bytes,
        )


class CurationResource(dg.ConfigurableResource):
    """The curation folder (inbox/, outbox/, processed/, rejected/) and review-file limits."""

    root: str | None = None
    max_file_bytes: int = ReviewLimits.max_bytes
    max_rows: int = ReviewLimits.max_rows

    def folders(self) -> CurationFolders:
        root = Path(self.root).expanduser().absolute() if self.root else current_settings().curation_root
        return CurationFolders(root)

    def limits(self) -> ReviewLimits:
        return ReviewLimits(max_bytes=self.max_file_bytes, max_rows=self.max_rows)


class ProductionLogsResource(dg.ConfigurableResource):
    """The folder of served-query logs (``*.jsonl``, schema in rag_assets.production.logs)."""

    root: str | None = None

    def folder(self) -> Path:
        return Path(self.root).expanduser().absolute() if self.root else current_settings().production_logs


class GoldenPolicyResource(dg.ConfigurableResource):
    """Bounds the golden-set quality check enforces: size, and coverage of question types."""

    min_items: int = 1
    max_items: int = 100_000
    required_types: list[str] = []
    max_type_share: float = 1.0


class LLMResource(dg.ConfigurableResource):
    """Claude when ``api_key`` is set (give it as ``EnvVar("ANTHROPIC_API_KEY")``), else offline.

    ``provider`` may force ``anthropic`` (fails without a key) or ``offline``. ``judge_model`` (default:
    ``model``) scores answers. ``prices`` maps a model-id prefix to USD per million input and output
    tokens, over the built-in table. ``requests_per_minute`` (default: no bound; from
    ``RAG_ASSETS_LLM_RPM``) paces every request of a step's process per model; with the ``anthropic``
    pool's limit it keeps the whole deployment under the account's rate limit.

    ``batch``: send a run's cache misses to Claude as Message Batches (half the price, answers within
    24 hours) once there are at least ``batch_min_calls`` of them; the first poll waits
    ``batch_poll_seconds``, each next one twice as long up to ``batch_max_poll_seconds``, and a run
    gives up (the batch stays pending and the next run resumes it) after ``batch_max_wait_seconds``.

    ``max_cost_usd`` (default: none; from ``RAG_ASSETS_MAX_COST_USD``) caps what one Dagster run spends on the
    LLM, all its steps together (one ``rag-assets run`` starts several Dagster runs, each with this cap); an
    asset's run config may cap that asset's share (see ``budget``).
    ``prompt_caching`` (default on) lays prompts out for Claude's prompt cache and marks its breakpoints.
    """

    provider: str = "auto"
    api_key: str | None = None
    model: str = DEFAULT_MODEL
    judge_model: str | None = None
    base_url: str | None = None
    timeout_seconds: float = 60.0
    max_retries: int = 4
    max_concurrency: int = 4
    requests_per_minute: int | None = None
    prices: dict[str, list[float]] = {}
    batch: bool = False
    batch_min_calls: int = BatchSettings.min_calls
    batch_poll_seconds: float = BatchSettings.poll_seconds
    batch_max_poll_seconds: float = BatchSettings.max_poll_seconds
    batch_max_wait_seconds: float = BatchSettings.max_wait_seconds
    max_cost_usd: float | None = None
    prompt_caching: bool = True

    def client(self, model: str | None = None, *, journal: BatchJournal | None = None,
               budget: Budget | None = None) -> LLMClient:
        """``journal`` (the store's ``llm_batches()``) is where the batch path records its batches;
        ``budget`` (see ``budget``) what the client may spend."""
        prices = {**DEFAULT_PRICES, **{prefix: Price(*pair) for prefix, pair in self.prices.items()}}
        return make_llm_client(self.provider, api_key=self.api_key, model=model or self.model, base_url=self.base_url,
                               timeout=self.timeout_seconds, max_retries=self.max_retries,
                               max_concurrency=self.max_concurrency, requests_per_minute=self.requests_per_minute,
                               prices=prices, batch=self.batch_settings(), journal=journal, budget=budget,
                               prompt_caching=self.prompt_caching)

    def offline(self) -> bool:
        """Whether ``client`` gives the offline heuristics (no key, or ``provider: offline``): they write the
        candidates the bundled simulated review of the sample corpus was made for."""
        return answers_offline(self.provider, bool(self.api_key))

    def judge_client(self, *, journal: BatchJournal | None = None, budget: Budget | None = None) -> LLMClient:
        """The judge may be another model than the generator (against self-preference bias)."""
        return self.client(self.judge_model, journal=journal, budget=budget)

    def budget(self, run_id: str, asset: str, asset_max_cost_usd: float | None, ledger: SpendLedger) -> Budget:
        """A step's budget: this resource's ``max_cost_usd`` for the whole run, ``asset_max_cost_usd`` (the
        asset's run config) for the asset's steps in it; spend is tallied in ``ledger`` (the store's)."""
        try:
            return Budget(run_id, asset, self.max_cost_usd, asset_max_cost_usd, ledger)
        except ValueError as exc:
            raise dg.Failure(description=f"invalid budget: {exc}") from exc

    def batch_settings(self) -> BatchSettings | None:
        if not self.batch:
            return None
        return BatchSettings(min_calls=self.batch_min_calls, poll_seconds=self.batch_poll_seconds,
                             max_poll_seconds=self.batch_max_poll_seconds,
                             max_wait_seconds=self.batch_max_wait_seconds)


class RagSystemResource(dg.ConfigurableResource):
    """Which RAG system answers the golden set.

    ``kind``: ``reference`` (built-in BM25 + the llm resource's model or the offline extractive
    generator), ``callable`` (``target`` = ``module:function``), ``http`` (``target`` = URL), or
    ``langchain`` / ``llamaindex`` (``target`` = ``module:attribute``, a chain or query engine or a
    function that builds one; LangChain chains are invoked with ``{input_key: question}``).
    ``headers`` (HTTP) are templates: ``{"Authorization": "Bearer ${RAG_ASSETS_SYSTEM_TOKEN}"}``
    names the env var holding the secret, so the UI shows the name and never the value.
    """

    kind: str = "reference"
    target: str | None = None
    name: str | None = None
    k: int = 5
    timeout_seconds: float = 30.0
    max_concurrency: int = 4
    retries: int = 2
    headers: dict[str, str] = {}
    max_response_bytes: int = 5_000_000
    input_key: str | None = "input"

    def model_post_init(self, context: object) -> None:
        """An http target holding a credential is refused when the resource is built: in ``definitions.py``
        that is before Dagster stores the value in the job's snapshot. So is a limit out of range
        (``check_system_limits``): from run config, when a step first builds the resource, before it answers."""
        super().model_post_init(context)
        check_system_limits(self.k, self.timeout_seconds, self.max_concurrency)
        if self.kind == "http" and self.target:
            refuse_url_credentials(self.target, "rag resource target", HEADERS_INSTEAD)

    def system(self, corpus_version: str, chunks, llm: LLMClient, cache, index_dir: Path,
               corpus_root: Path | None = None):
        """``corpus_root`` (the snapshot's) makes a framework's absolute document paths relative."""
        from rag_assets.rag.factory import make_system

        return make_system(self.kind, self.target, corpus_version, chunks, llm, cache, index_dir, corpus_root,
                           name=self.name, k=self.k, timeout=self.timeout_seconds, max_concurrency=self.max_concurrency,
                           retries=self.retries, headers=self.headers, max_response_bytes=self.max_response_bytes,
                           input_key=self.input_key)


def max_cost_help(spender: str) -> str:
    """The description of an asset's run config field ``max_cost_usd``; ``spender`` names who pays ("the judge")."""
    return (f"the most {spender} may spend on this asset in one run, in USD (default: only the llm resource's limit "
            "for the whole run)")


@contextmanager
def budget_failure(spender: str, asset_limit: bool = True) -> Iterator[None]:
    """A BudgetExceeded in the block fails the step with ``<spender> budget: <why>``: which limit (the run's or the
    asset's), what is spent and how to go on, as ``rag-assets run`` lists the step's failure. ``asset_limit``: the
    asset has a ``max_cost_usd`` of its own in its run config; without one the way on names the run's limit only."""
    try:
        yield
    except BudgetExceeded as exc:
        why = str(exc) if asset_limit else str(exc).replace(HOW_TO_RAISE, RUN_LIMIT)
        raise dg.Failure(description=f"{spender} budget: {why}") from exc


def llm_resource(settings: Settings) -> LLMResource:
    """The key and the rate are passed as EnvVar references (the UI shows their names, never the key); the
    budget is a plain amount."""
    options: dict[str, object] = {"max_cost_usd": settings.max_cost_usd}
    if settings.anthropic_api_key_set:
        options["api_key"] = dg.EnvVar(API_KEY_ENV)
    if settings.llm_requests_per_minute:
        options["requests_per_minute"] = dg.EnvVar.int(LLM_RPM_ENV)
    return LLMResource(**options)


def bundled_resources(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    """The unnamed instance's resources: every path and the store from ``settings`` where they are used, the
    LLM's key, rate and budget from ``settings`` now."""
    return {
        "store": StoreResource(),
        "corpus": CorpusResource(),
        "llm": llm_resource(settings),
        "curation": CurationResource(),
        "golden_policy": GoldenPolicyResource(),
        "rag": RagSystemResource(),
        "production_logs": ProductionLogsResource(),
    }


RESOURCES = bundled_resources(current_settings())
