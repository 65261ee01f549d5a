"""A real SQLite store for the use cases, without Dagster: the repositories the store resource gives, over a file in
tmp_path, with a snapshot of a two-document corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.engine import describe_url, get_engine
from rag_assets.store.evaluation_repository import SqlEvaluationRepository
from rag_assets.store.golden_repository import SqlGoldenRepository
from rag_assets.store.rag_repository import SqlRagRepository

LIMITS = "The API allows 50 requests per minute per key. Requests above the limit get status 429."
ROTATE = "To rotate a key, create a new key in the console, move your clients to it, then delete the old key."
#: A ragas test set of two items, one answered by each document of ``corpus_dir``.
ROWS = [{"id": "limit", "user_input": "What is the rate limit?", "reference": "50 requests per minute per key.",
         "reference_contexts": [LIMITS]},
        {"id": "rotate", "user_input": "How do I rotate a key?", "reference": "Create a new key, then delete the old one.",
         "reference_contexts": [ROTATE]}]


def write_ragas(path: Path, rows: list[dict]) -> Path:
    """``rows`` as a ragas JSONL file at ``path``."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


class SqliteStore:
    """The store's repositories over one SQLite file; ``made`` is whether the file is there yet."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"

    def made(self) -> bool:
        return self.path.exists()

    def describe(self) -> str:
        return describe_url(self.url)

    def corpus(self) -> SqlCorpusRepository:
        return SqlCorpusRepository(get_engine(self.url))

    def curation(self) -> SqlCurationRepository:
        return SqlCurationRepository(get_engine(self.url))

    def golden(self) -> SqlGoldenRepository:
        return SqlGoldenRepository(get_engine(self.url))

    def rag(self) -> SqlRagRepository:
        return SqlRagRepository(get_engine(self.url))

    def evaluations(self) -> SqlEvaluationRepository:
        return SqlEvaluationRepository(get_engine(self.url))


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    """Two Markdown documents: rate limits and key rotation."""
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "limits.md").write_text(f"# Rate limits\n\n{LIMITS}\n", encoding="utf-8")
    (root / "keys.md").write_text(f"# API keys\n\n{ROTATE}\n", encoding="utf-8")
    return root


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    """A store with no file yet."""
    return SqliteStore(tmp_path / "store.db")


@pytest.fixture
def snapshotted(store: SqliteStore, corpus_dir: Path) -> tuple[SqliteStore, str]:
    """The store holding a snapshot of ``corpus_dir``, and its version."""
    return store, snapshot_corpus(corpus_dir, ChunkerConfig(), store.corpus()).version_id
