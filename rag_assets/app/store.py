"""What the use cases read of the store: the repositories, as the Dagster store resource gives them."""

from __future__ import annotations

from typing import Protocol

from rag_assets.llm.cache import LLMCache
from rag_assets.store.candidate_repository import SqlCandidateRepository
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.evaluation_repository import SqlEvaluationRepository
from rag_assets.store.golden_repository import SqlGoldenRepository
from rag_assets.store.production_repository import SqlProductionRepository
from rag_assets.store.rag_repository import SqlRagRepository


class Store(Protocol):
    """The store's repositories (``rag_assets.defs.resources.StoreResource`` has them)."""

    def corpus(self) -> SqlCorpusRepository: ...
    def candidates(self) -> SqlCandidateRepository: ...
    def curation(self) -> SqlCurationRepository: ...
    def golden(self) -> SqlGoldenRepository: ...
    def rag(self) -> SqlRagRepository: ...
    def evaluations(self) -> SqlEvaluationRepository: ...
    def production(self) -> SqlProductionRepository: ...
    def llm_cache(self) -> LLMCache: ...


class KeptStore(Store, Protocol):
    """A store that tells whether it exists yet without making it (reading a SQLite store makes its file), and
    names itself in a message: a command that only reads says there is nothing to read."""

    def made(self) -> bool: ...
    def describe(self) -> str: ...
