from pathlib import Path

from sqlalchemy import inspect

from rag_assets.settings import Settings
from rag_assets.store.engine import batched, describe_url, get_engine


def test_settings_default_to_sqlite_in_the_home_and_take_a_url_from_the_environment(tmp_path: Path):
    settings = Settings.from_env({"RAG_ASSETS_HOME": str(tmp_path / "h")})
    assert settings.store_url == f"sqlite:///{tmp_path / 'h' / 'rag_assets.db'}"
    url = "postgresql+psycopg2://u:pw@db/x"
    assert Settings.from_env({"RAG_ASSETS_DATABASE_URL": url}).store_url == url


def test_tables_are_created_on_first_use(store_url: str):
    names = set(inspect(get_engine(store_url)).get_table_names())
    assert {"corpus_snapshot", "document_revision", "snapshot_document", "chunk", "file_stat_cache"} <= names


def test_a_url_shown_to_users_hides_its_password():
    assert describe_url("postgresql+psycopg2://rag:s3cret@db:5432/rag") == "postgresql+psycopg2://rag:***@db:5432/rag"


def test_batched_splits_any_iterable():
    assert [list(b) for b in batched(range(5), 2)] == [[0, 1], [2, 3], [4]]
