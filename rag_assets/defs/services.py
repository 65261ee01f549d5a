"""The resources of one lifecycle instance, as a step, check or sensor of it reads them from its context.

An instance binds its resources under its own keys (``Lifecycle.named``), so two instances share a code
location without sharing a resource. A definition names the bare keys it uses (``Lifecycle.resource_keys``
gives Dagster the instance's keys as ``required_resource_keys``) and reads them here by their bare names,
typed, instead of taking them as parameters named after the instance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import dagster as dg

from rag_assets.defs.resources import (CorpusResource, CurationResource, GoldenPolicyResource, LLMResource,
                                       ProductionLogsResource, RagSystemResource, StoreResource)

R = TypeVar("R")


@dataclass(frozen=True)
class Services:
    """One instance's resources in one context: ``resources`` is the context's, ``named`` the instance's key of a
    bare resource name. A resource the definition did not require is not in ``resources``: reading it fails."""

    resources: Any
    named: Callable[[str], str]

    def resource(self, key: str) -> dg.ConfigurableResource:
        """The resource this instance binds for the bare ``key``."""
        return getattr(self.resources, self.named(key))

    @property
    def store(self) -> StoreResource:
        return self._typed("store", StoreResource)

    @property
    def llm(self) -> LLMResource:
        return self._typed("llm", LLMResource)

    @property
    def corpus(self) -> CorpusResource:
        return self._typed("corpus", CorpusResource)

    @property
    def curation(self) -> CurationResource:
        return self._typed("curation", CurationResource)

    @property
    def golden_policy(self) -> GoldenPolicyResource:
        return self._typed("golden_policy", GoldenPolicyResource)

    @property
    def rag(self) -> RagSystemResource:
        return self._typed("rag", RagSystemResource)

    @property
    def production_logs(self) -> ProductionLogsResource:
        return self._typed("production_logs", ProductionLogsResource)

    def _typed(self, key: str, kind: type[R]) -> R:
        """The resource as its kind (a test may bind a stand-in of another class, as Dagster allows)."""
        return cast(kind, self.resource(key))
