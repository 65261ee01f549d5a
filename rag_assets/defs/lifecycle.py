"""One instance of the lifecycle graph: the names it takes in a Dagster deployment, and its schedule.

The bundled code location is the instance without a name: bare asset keys, groups, jobs, sensors,
partitions and resource keys, as before there were several. A named instance (a ``RagEvaluation``
component) puts its name in front of every one of them, so two products live in one code location
without sharing a partition, a cursor or a resource.

Every definition of the graph is built by a function of a ``Lifecycle``; those functions are cached,
so the bundled instance's objects are the same ones the modules expose as module-level names. A definition
requires its instance's resource keys (``resource_keys``) and reads the resources by their bare names
(``services``), so one function body serves every instance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import dagster as dg

from rag_assets.defs.services import Services
from rag_assets.errors import ConfigError
from rag_assets.llm.factory import DEFAULT_MODEL, llm_identity
from rag_assets.settings import DEFAULT_EVALUATION_CRON, DEFAULT_PRODUCTION_START, Settings, current_settings

#: The asset groups of one instance; a named instance prefixes each with its name.
GROUPS = ("corpus", "generation", "curation", "golden", "rag", "evaluation", "calibration", "production")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

@dataclass(frozen=True)
class Lifecycle:
    """What tells one instance's definitions apart from another's (hashable: builders cache on it).

    ``sensor_interval``: seconds between ticks of every sensor; None keeps each sensor's own default.
    ``threshold_profile`` / ``thresholds_file``: the evaluation's default thresholds (None: the config's own;
    run config may still choose others).
    ``judge``: the judge the instance's LLM resource gives when the code location loads (``llm_identity``; None:
    unknown). It is part of the code version of every asset the judge scores (``judged``), so that once a key is
    set, another judge model is chosen or the offline heuristics change, Dagster and ``rag-assets run`` find those
    assets stale instead of showing the scores of the judge before as current.
    ``generator``: likewise the model that writes the reference system's answers (``llm_identity`` of the model, not
    the judge model; None where the instance's system is not the reference one), part of rag_answers' code version
    (``generated``): with a key set, the reference system's answers are Claude's, so the offline answers before are
    stale.
    ``evidence_min_overlap``: the overlap a context needs to hit an evidence span (RAG_ASSETS_EVIDENCE_MIN_OVERLAP
    when the code location loads; None: unknown), part of the code version of the assets with retrieval figures
    (``counted``).
    """

    name: str | None = None
    production_start: str = DEFAULT_PRODUCTION_START
    evaluation_cron: str = DEFAULT_EVALUATION_CRON
    sensor_interval: int | None = None
    threshold_profile: str | None = None
    thresholds_file: str | None = None
    judge: str | None = None
    generator: str | None = None
    evidence_min_overlap: float | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not _NAME.match(self.name):
            raise ConfigError(f"instance name {self.name!r} must be lower-case letters, digits and _ (starting with "
                              "a letter, at most 40 characters): it prefixes asset keys, groups and resource keys")

    @classmethod
    def bundled(cls, settings: Settings) -> Lifecycle:
        """The unnamed instance, configured by the RAG_ASSETS_* variables when the code location loads."""
        llm = llm_identity("auto", settings.anthropic_api_key_set, DEFAULT_MODEL)  # one model generates and judges
        return cls(production_start=settings.production_start, evaluation_cron=settings.evaluation_cron,
                   sensor_interval=settings.sensor_interval, judge=llm, generator=llm,
                   evidence_min_overlap=settings.evidence_min_overlap)

    def generated(self, code_version: str) -> str:
        """The code version of the RAG answers: ``code_version`` with the model the reference system answers with."""
        return f"{code_version}+{self.generator}" if self.generator else code_version

    def judged(self, code_version: str) -> str:
        """The code version of an asset the judge scores: ``code_version`` with the instance's judge."""
        return f"{code_version}+{self.judge}" if self.judge else code_version

    def counted(self, code_version: str) -> str:
        """The code version of an asset with retrieval figures: ``code_version`` with the evidence overlap they count
        hits by."""
        overlap = self.evidence_min_overlap
        return code_version if overlap is None else f"{code_version}+overlap={overlap:g}"

    def named(self, thing: str) -> str:
        """A job, sensor, schedule, group, partitions or resource name of this instance."""
        return f"{self.name}_{thing}" if self.name else thing

    @property
    def key_prefix(self) -> list[str]:
        return [self.name] if self.name else []

    def key(self, asset: str) -> dg.AssetKey:
        return dg.AssetKey([*self.key_prefix, asset])

    def corpus_asset(self, group: str, *upstream: str) -> dict[str, Any]:
        """Where an asset of one corpus version sits in this instance: its key prefix, partitions, group and the
        assets it reads (the ``@dg.asset`` arguments every such asset shares)."""
        return {"key_prefix": self.key_prefix, "partitions_def": self.corpus_versions,
                "deps": [self.key(name) for name in upstream], "group_name": self.named(group)}

    def assets(self, *names: str) -> dg.AssetSelection:
        return dg.AssetSelection.assets(*(self.key(name) for name in names))

    def groups(self, *groups: str) -> dg.AssetSelection:
        """This instance's assets in ``groups`` (all of its groups when none is named)."""
        return dg.AssetSelection.groups(*(self.named(group) for group in groups or GROUPS))

    def interval(self, default: int) -> int:
        return self.sensor_interval or default

    @cached_property
    def corpus_versions(self) -> dg.DynamicPartitionsDefinition:
        return dg.DynamicPartitionsDefinition(name=self.named("corpus_versions"))

    @cached_property
    def production_days(self) -> dg.DailyPartitionsDefinition:
        return dg.DailyPartitionsDefinition(start_date=self.production_start)

    def resource_keys(self, *keys: str) -> set[str]:
        """The instance's keys of the bare resource names ``keys``: a definition's ``required_resource_keys``."""
        return {self.named(key) for key in keys}

    def services(self, context: Any) -> Services:
        """The instance's resources in ``context`` (a step's, a check's or a sensor's), by their bare names."""
        return Services(context.resources, self.named)


BUNDLED = Lifecycle.bundled(current_settings())
