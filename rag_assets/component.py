"""``rag_assets.RagEvaluation``: the whole lifecycle of one RAG product as a Dagster component.

A ``defs.yaml`` of this type is one instance: its name prefixes every asset key, group, job, sensor,
schedule, partitions definition and resource key, and its data lives in its own home (SQLite store,
reports, indexes, golden-set exports) unless it names its own database. Several instances share a
code location and a Dagster instance without sharing a row, a partition or a cursor.

The instance without a name is the bundled code location: bare names, every setting from the
RAG_ASSETS_* variables (rag_assets/location/defs.yaml).

This module imports only Dagster and the settings at import time: ``import rag_assets`` loads it, and
the graph is built only when Dagster asks for the definitions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from rag_assets.errors import ConfigError
from rag_assets.llm.factory import DEFAULT_MODEL, llm_identity
from rag_assets.settings import (DATABASE_URL_ENV, DEFAULT_EVALUATION_CRON, DEFAULT_PRODUCTION_START, checked_cron,
                                 checked_iso_date, current_settings, environment)

if TYPE_CHECKING:
    from rag_assets.defs.lifecycle import Lifecycle
    from rag_assets.defs.resources import LLMResource

_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class SystemSpec(dg.Model):
    """The RAG system the instance evaluates: the fields of the ``rag`` resource (``RagSystemResource``), as
    ``rag-assets run --system / --system-url / --system-header`` sets them."""

    kind: str = Field(default="reference", description="reference, callable, http, langchain or llamaindex")
    target: str | None = Field(default=None, description="module:attribute (callable, langchain, llamaindex) or "
                                                         "the URL (http)")
    name: str | None = None
    k: int = 5
    timeout_seconds: float = 30.0
    headers: dict[str, str] = Field(default_factory=dict, description=(
        "HTTP headers as templates naming environment variables, e.g. Authorization: 'Bearer ${SUPPORT_TOKEN}'; "
        "the value is read when a request is sent and never shown"))
    input_key: str | None = "input"


class LLMSpec(dg.Model):
    """The LLM that generates questions and judges answers; the key only as a reference to a variable."""

    provider: str = Field(default="auto", description="auto (Claude when the key is set, else offline), anthropic "
                                                      "or offline")
    model: str | None = None
    judge_model: str | None = None
    max_cost_usd: float | None = Field(default=None, description=(
        "the most one Dagster run may spend on the LLM, in USD (one `rag-assets run` starts several)"))
    requests_per_minute: int | None = Field(default=None, description=(
        "paces each step's requests per model; with the 'anthropic' pool's limit it keeps the deployment under "
        "the account's rate limit"))
    api_key: str | None = Field(default=None, description="'${ANTHROPIC_API_KEY}': the variable holding the key, "
                                                          "never the key itself")
    base_url: str | None = None


class RagEvaluationScaffolder(dg.Scaffolder):
    """``dg scaffold defs rag_assets.RagEvaluation <path>``: a named instance (the folder's name) over a corpus
    folder beside its defs.yaml (made empty, for the product's documents), the reference system and the offline
    LLM unless ANTHROPIC_API_KEY is set."""

    def scaffold(self, request: dg.ScaffoldRequest) -> None:
        name = re.sub(r"[^a-z0-9_]", "_", request.target_path.name.lower()).lstrip("_0123456789") or "rag"
        dg.scaffold_component(request, {
            "name": name[:40],
            "corpus_root": "corpus",
            "system": {"kind": "reference"},
            "threshold_profile": "auto",
            "evaluation_cron": DEFAULT_EVALUATION_CRON,
            "llm": {"provider": "auto", "api_key": "${ANTHROPIC_API_KEY}"},
        })
        corpus = request.target_path / "corpus"  # where the product's documents go (corpus_root above)
        corpus.mkdir(parents=True, exist_ok=True)
        (corpus / ".gitkeep").touch()  # git keeps the empty folder; the corpus reader skips dot files


@dg.scaffold_with(RagEvaluationScaffolder)
class RagEvaluation(dg.Component, dg.Model, dg.Resolvable):
    """The golden-set lifecycle of one RAG product: corpus snapshots, question generation, expert curation,
    versioned golden sets, RAG runs, scoring, checks, sensors and a re-evaluation schedule.

    Relative paths are relative to the folder of this defs.yaml. Unset paths of a named instance live in its
    home (``<RAG_ASSETS_HOME>/<name>`` by default): ``curation/``, ``production_logs/``; the corpus root
    defaults to RAG_ASSETS_CORPUS_ROOT.
    """

    name: str | None = Field(default=None, description=(
        "the instance's name (lower-case letters, digits, _): the prefix of its asset keys, groups, jobs, "
        "sensors and resource keys; leave it out only for the one instance configured by RAG_ASSETS_* variables"))
    corpus_root: str | None = None
    home: str | None = Field(default=None, description="where the instance keeps its store, reports and indexes")
    database_url_env: str | None = Field(default=None, description=(
        "the environment variable holding this instance's own database URL (default: SQLite in home); no two "
        f"instances may name the same one, nor {DATABASE_URL_ENV}, which belongs to the unnamed instance"))
    curation_root: str | None = None
    production_logs: str | None = None
    production_start: str | None = Field(default=None, description="first day of production partitions, YYYY-MM-DD")
    evaluation_cron: str | None = Field(default=None, description=f"re-evaluation schedule, default '{DEFAULT_EVALUATION_CRON}'")
    sensor_interval_seconds: int | None = None
    threshold_profile: str | None = Field(default=None, description="auto, general, high_stakes, developer or "
                                                                     "offline")
    thresholds_file: str | None = None
    system: SystemSpec = Field(default_factory=SystemSpec)
    llm: LLMSpec = Field(default_factory=LLMSpec)

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        from rag_assets.defs.executors import executor_for
        from rag_assets.defs.graph import build_definitions
        from rag_assets.defs.lifecycle import BUNDLED
        from rag_assets.defs.resources import RESOURCES

        if self.name is None:
            configured = sorted(self.model_dump(exclude_defaults=True))
            if configured:
                raise ConfigError("the unnamed instance takes its settings from the RAG_ASSETS_* variables; give it a "
                                  f"name to set {', '.join(configured)}")
            return build_definitions(BUNDLED, RESOURCES, executor_for(current_settings()))
        return build_definitions(self.lifecycle(context.path), self.resources(context.path))

    def lifecycle(self, base: Path | None = None) -> Lifecycle:
        """The instance's names and schedule; ``base`` is the folder relative paths start from."""
        from rag_assets.defs.lifecycle import Lifecycle

        start = checked_iso_date("production_start", self.production_start or DEFAULT_PRODUCTION_START)
        keyed = self._key_variable() is not None
        cron = checked_cron("evaluation_cron", self.evaluation_cron or DEFAULT_EVALUATION_CRON)
        return Lifecycle(name=self.name, production_start=start, evaluation_cron=cron,
                         sensor_interval=self.sensor_interval_seconds, threshold_profile=self.threshold_profile,
                         thresholds_file=self._path(self.thresholds_file, base),
                         judge=llm_identity(self.llm.provider, keyed, self.llm.judge_model or self.llm.model or DEFAULT_MODEL),
                         generator=llm_identity(self.llm.provider, keyed, self.llm.model or DEFAULT_MODEL)
                         if self.system.kind == "reference" else None,
                         evidence_min_overlap=current_settings().evidence_min_overlap)

    def home_path(self, base: Path | None = None) -> Path:
        """``home``, or ``<RAG_ASSETS_HOME>/<name>``."""
        if self.home:
            return Path(str(self._path(self.home, base)))
        return current_settings().home / str(self.name)

    def resources(self, base: Path) -> dict[str, dg.ConfigurableResource]:
        """The instance's resources under their bare keys (``build_definitions`` binds them under its own)."""
        from rag_assets.defs.resources import (CorpusResource, CurationResource, GoldenPolicyResource,
                                               ProductionLogsResource, RagSystemResource, StoreResource)

        from rag_assets.rag.factory import check_system_spec

        if self.database_url_env == DATABASE_URL_ENV:
            raise ConfigError(f"instance {self.name}: database_url_env {DATABASE_URL_ENV} is the unnamed instance's "
                              "database; give this instance a database of its own (its rows carry no instance name)")
        try:
            check_system_spec(self.system.kind, self.system.target, self.system.k, self.system.timeout_seconds)
        except ConfigError as exc:
            raise ConfigError(f"instance {self.name}: system: {exc}") from exc
        home = self.home_path(base)
        return {
            "store": StoreResource(home=str(home), database_url_env=self.database_url_env, instance=str(self.name)),
            "corpus": CorpusResource(root=self._path(self.corpus_root, base)),
            "curation": CurationResource(root=self._path(self.curation_root, base) or str(home / "curation")),
            "production_logs": ProductionLogsResource(
                root=self._path(self.production_logs, base) or str(home / "production_logs")),
            "golden_policy": GoldenPolicyResource(),
            "rag": RagSystemResource(**self.system.model_dump()),
            "llm": self._llm_resource(),
        }

    def _llm_resource(self) -> LLMResource:
        from rag_assets.defs.resources import LLMResource

        options: dict[str, object] = self.llm.model_dump(exclude={"api_key"}, exclude_none=True)
        variable = self._key_variable()
        if variable is not None:
            options["api_key"] = dg.EnvVar(variable)
        return LLMResource(**options)

    def _key_variable(self) -> str | None:
        """The variable ``llm.api_key`` names, when it holds a key now (None: no key, so auto is offline)."""
        if self.llm.api_key is None:
            return None
        match = _ENV_REFERENCE.match(self.llm.api_key)
        if match is None:
            raise ConfigError(f"instance {self.name}: llm.api_key must name the environment variable that holds "
                              "the key, as '${ANTHROPIC_API_KEY}', never the key itself")
        return match.group(1) if environment().get(match.group(1)) else None

    @staticmethod
    def _path(value: str | None, base: Path | None) -> str | None:
        if value is None:
            return None
        path = Path(value).expanduser()
        return os.path.normpath(path if path.is_absolute() or base is None else base.absolute() / path)

