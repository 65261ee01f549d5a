"""The schema is owned by alembic: the tables' models and the migrations agree, and a store made by
the code before migrations (main at the baseline commit, run as a user ran it) upgrades in place with
every golden version, decision, score and chunk text intact."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import read_chunks, snapshot_corpus
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.engine import get_engine, write_transaction
from rag_assets.store.migrate import current_revision, head_revision, migration_config, upgrade_schema
from tests.conftest import PROJECT_ROOT, SAMPLE_CORPUS

# The last commit whose stores were made with create_all, before the first migration.
BASELINE_COMMIT = "79edbae462ad38a744e90382445e510ca4e01d35"

# What a store holds that an upgrade must keep, each as rows read with plain SQL.
KEPT = {
    "golden versions": "SELECT number, corpus_version, content_hash, item_count FROM golden_version ORDER BY number",
    "golden members": "SELECT number, item_id, revision FROM golden_version_item ORDER BY number, item_id",
    "item revisions": "SELECT item_id, revision, question, reference_answer, relevant_chunks_json, corpus_version "
                      "FROM golden_item_revision ORDER BY item_id, revision",
    "decisions": "SELECT candidate_id, decision, reviewer, source_sha256, source_row FROM review_decision "
                 "ORDER BY decision_id",
    "scores": "SELECT evaluation_id, item_id, metric, value, failure FROM evaluation_score "
              "ORDER BY evaluation_id, item_id, metric",
    "evaluations": "SELECT evaluation_id, aggregates_json, gates_json, passed FROM evaluation ORDER BY evaluation_id",
    "chunks": "SELECT chunk_id, start_char, end_char, text FROM chunk ORDER BY chunk_id",
}


def _rows(url: str) -> dict[str, list[tuple]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {name: [tuple(row) for row in conn.execute(text(query))] for name, query in KEPT.items()}
    finally:
        engine.dispose()


def _old_store(url: str, work: Path) -> Path:
    """Run ``rag-assets run`` of the baseline commit on a copy of the sample corpus, into ``url``."""
    if shutil.which("git") is None or not (PROJECT_ROOT / ".git").exists():
        pytest.skip("needs the project's git history (a git checkout) to run the baseline commit's code")
    code = work / "baseline"
    code.mkdir()
    archive = subprocess.run(["git", "-C", str(PROJECT_ROOT), "archive", BASELINE_COMMIT, "rag_assets", "data"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
    corpus = work / "corpus"
    shutil.copytree(SAMPLE_CORPUS, corpus)
    env = {**os.environ, "PYTHONPATH": str(code), "RAG_ASSETS_HOME": str(work / "home"),
           "RAG_ASSETS_CORPUS_ROOT": str(corpus), "RAG_ASSETS_DATABASE_URL": url}
    env.pop("RAG_ASSETS_CURATION_ROOT", None)
    run = subprocess.run([sys.executable, "-c", "import sys; from rag_assets.cli import main; sys.exit(main(['run', '--no-production']))"],
                         cwd=code, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "succeeded" in run.stdout
    return corpus


def _schema_differences(url: str) -> list:
    with get_engine(url).connect() as conn:
        return compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), SQLModel.metadata)


def test_the_migrations_build_exactly_the_tables_the_code_declares(store_url: str):
    assert _schema_differences(store_url) == []
    with get_engine(store_url).connect() as conn:
        assert current_revision(conn) == head_revision()


@pytest.mark.slow
def test_a_store_made_before_migrations_upgrades_in_place(store_url: str, tmp_path: Path):
    corpus = _old_store(store_url, tmp_path)
    before = _rows(store_url)
    assert before["golden versions"] and before["decisions"] and before["scores"], "the old run made a golden set"
    assert all(chunk_text for *_, chunk_text in before["chunks"])
    with create_engine(store_url).connect() as conn:
        assert current_revision(conn) is None, "the baseline code made no alembic_version"

    engine = get_engine(store_url)  # upgrades
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
    assert _rows(store_url) == before
    assert _schema_differences(store_url) == []

    # Old revisions have no body and keep their chunks' texts; a new revision stores its body once.
    repo = SqlCorpusRepository(engine)
    old_version = repo.latest_version(str(corpus.resolve()))
    assert [c.text for c in repo.snapshot_chunks(old_version)] == [c.text for c in read_chunks(corpus, ChunkerConfig())[1]]
    changed = sorted(corpus.rglob("*.md"))[0]
    changed.write_text(changed.read_text(encoding="utf-8") + "\n\nA paragraph added after the upgrade.\n",
                       encoding="utf-8")
    outcome = snapshot_corpus(corpus, ChunkerConfig(), repo)
    assert outcome.created and outcome.diff.count("changed") == 1
    assert [(c.chunk_id, c.text) for c in repo.snapshot_chunks(outcome.version_id)] == \
        [(c.chunk_id, c.text) for c in read_chunks(corpus, ChunkerConfig())[1]]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM document_body")).scalar_one() == 1
        assert conn.execute(text("SELECT count(*) FROM chunk WHERE text IS NULL")).scalar_one() == \
            conn.execute(text("SELECT chunk_count FROM document_revision WHERE body_hash IS NOT NULL")).scalar_one()


def test_downgrading_the_body_store_gives_chunks_their_texts_back(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    repo = SqlCorpusRepository(get_engine(url))
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), repo).version_id
    expected = [(c.chunk_id, c.text) for c in repo.snapshot_chunks(version)]
    with get_engine(url).begin() as conn:
        assert conn.execute(text("SELECT count(*) FROM chunk WHERE text IS NOT NULL")).scalar_one() == 0
        command.downgrade(migration_config(conn), "0001")
    with get_engine(url).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM chunk WHERE text IS NULL")).scalar_one() == 0
        assert not conn.execute(text("SELECT name FROM sqlite_master WHERE name = 'document_body'")).all()
    with write_transaction(get_engine(url)) as conn:
        upgrade_schema(conn)
    assert [(c.chunk_id, c.text) for c in repo.snapshot_chunks(version)] == expected
