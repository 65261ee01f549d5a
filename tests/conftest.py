"""Shared fixtures: a store on SQLite and (where a server answers) on PostgreSQL."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest

from rag_assets.settings import SQLITE_FILE_NAME
from rag_assets.store.engine import get_engine
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import generation_responder

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CORPUS = PROJECT_ROOT / "data" / "corpus"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
MEMORY_TEMP_ROOT, MEMORY_TEMP_MIN_FREE = Path("/dev/shm"), 4 * 2**30


def _temp_in_memory() -> None:
    """Put every temporary file of the suite (pytest's tmp_path, Dagster's test instances, the servers' homes,
    and those of every subprocess, which inherit TMPDIR) on tmpfs when the machine has one with room to spare.

    Most of the suite writes SQLite files: Dagster's event log opens, commits and closes a connection per event
    (hundreds per run), and every commit and close syncs to disk. On a virtual disk shared with other work those
    syncs took about a tenth of an idle run and far more under load; on tmpfs they cost nothing. What the tests
    write and read is the same; only where the bytes live changes. A small /dev/shm (a container's 64 MB
    default) is left alone."""
    if os.environ.get("TMPDIR") or not MEMORY_TEMP_ROOT.is_dir():
        return
    usage = shutil.disk_usage(MEMORY_TEMP_ROOT)
    if usage.free < MEMORY_TEMP_MIN_FREE or not os.access(MEMORY_TEMP_ROOT, os.W_OK):
        return
    os.environ["TMPDIR"] = str(MEMORY_TEMP_ROOT)
    tempfile.tempdir = None  # gettempdir() looks again, now at TMPDIR


_temp_in_memory()


# The test files that take longest, longest first: seconds a file's tests took in one run of the CI command
# (`-n 4` on 2 cores, 2026-12-06, `--junitxml` summed per file). Only the order matters, and
# only for the tail: a file missing here, renamed or grown merely starts later.
LONGEST_FILES = (
    "e2e/test_lifecycle.py",  # 209
    "defs/test_curation_flow.py",  # 111
    "test_cli_claude_sample.py",  # 98
    "test_cli_rerun.py",  # 89
    "deploy/test_postgres_deployment.py",  # 86
    "test_cli_system.py",  # 84
    "test_cli_failed_steps.py",  # 81
    "defs/test_production_asset.py",  # 70
    "store/test_migrations.py",  # 68
    "defs/test_component.py",  # 66
    "defs/test_shards.py",  # 62
    "test_cli_judge_review.py",  # 57
    "scoring/test_calibration.py",  # 56
    "test_cli.py",  # 53
    "defs/test_judge_calibration.py",  # 51
    "test_cli_import_golden.py",  # 48
    "defs/test_automation.py",  # 40
    "test_cli_renamed_corpus.py",  # 39
    "defs/test_celery.py",  # 38
    "test_cli_accept_all.py",  # 36
    "defs/test_curation_inbox.py",  # 36
    "defs/test_judge_failure_budget_check.py",  # 36
    "defs/test_evaluation_asset.py",  # 36
    "test_cli_moved_corpus.py",  # 34
    "test_cli_changed_corpus.py",  # 33
    "test_acceptance_anthropic_docs.py",  # 33
    "corpus/test_snapshot.py",  # 31
    "defs/test_evaluation_reuse.py",  # 30
    "test_machine_faults.py",  # 30
    "defs/test_ab_asset.py",  # 29
    "defs/test_budget_asset.py",  # 29
    "rag/test_own_systems.py",  # 28
    "test_cli_killed_import.py",  # 27
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Start the longest files first (``LONGEST_FILES``: the webserver's end-to-end lifecycle, minutes mostly
    waiting for the daemon, then the files that run whole lifecycles), then any other file with ``slow`` tests,
    then the rest in collection order.

    xdist hands out whole files (``--dist loadfile``) in this order (``--no-loadscope-reorder``) to whichever
    worker runs out first, so the long waits overlap the rest of the suite, and the last files handed out are
    short: no worker is left running a minute-long file after the others finished. Sorting by collection
    order alone put the CLI's run-heavy files (tests/test_cli*.py) at the very end. Order decides only when a
    test runs, never what it sees: each test makes its own state."""
    rank = {Path(__file__).parent / name: index for index, name in enumerate(LONGEST_FILES)}
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: (rank.get(item.path, len(rank)), item.path not in slow_files))


def _postgres_answers() -> bool:
    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def postgres_database(prefix: str = "rag_assets_test") -> Iterator[str]:
    """A fresh PostgreSQL database with a unique name (other sessions run concurrently); yields its
    name and drops it afterwards, even while something is still connected. Skips without a server."""
    if not _postgres_answers():
        pytest.skip(f"no PostgreSQL server answers on {PG_HOST}:{PG_PORT}")
    import psycopg2

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def postgres_url(name: str) -> str:
    return f"postgresql+psycopg2://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The same store test runs on SQLite and on a PostgreSQL database it creates and drops."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    with postgres_database() as name:
        url = postgres_url(name)
        try:
            yield url
        finally:
            get_engine(url).dispose()


@pytest.fixture
def sample_corpus(tmp_path: Path) -> Path:
    """A private copy of the bundled corpus that a test may change."""
    target = tmp_path / "corpus"
    shutil.copytree(SAMPLE_CORPUS, target)
    return target


@pytest.fixture
def project_env(tmp_path: Path, sample_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the project's home and corpus root at temporary folders, as a user would with env vars."""
    home = tmp_path / "home"
    monkeypatch.setenv("RAG_ASSETS_HOME", str(home))
    monkeypatch.setenv("RAG_ASSETS_CORPUS_ROOT", str(sample_corpus))
    monkeypatch.setenv("RAG_ASSETS_CURATION_ROOT", str(tmp_path / "curation"))
    monkeypatch.delenv("RAG_ASSETS_DATABASE_URL", raising=False)
    return home


@pytest.fixture
def checkout(project_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What ``rag-assets`` finds in a fresh checkout: the curation folder with the bundled simulated review, and
    no DAGSTER_HOME (the CLI makes its own in the home)."""
    from rag_assets.settings import Settings

    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    root = Settings.from_env().curation_root
    shutil.copytree(PROJECT_ROOT / "data" / "curation" / "sample", root / "sample")
    return root


class SharedCheckout:
    """A checkout (home, corpus, curation folder) that a module's tests all start from, made once per worker and
    put back, byte for byte and at the same path, before each test that uses it.

    The same first ``rag-assets run`` on a fresh checkout was computed again for every test of a module that goes on
    from there. A copy elsewhere would not do: the store and Dagster's instance record absolute paths (the corpus
    root, the report), so the checkout keeps its one path and each test gets the state of a new first run there,
    whatever ran before it. The test's environment points at it as ``project_env`` and ``checkout`` do."""

    def __init__(self, root: Path, prepare: Callable[[Path], object], dagster_home: str | None = None,
                 curation_sample: bool = True) -> None:
        """``prepare(home)`` makes the state (e.g. runs ``rag-assets run``), pointed at the checkout with
        ``DAGSTER_HOME`` set to ``dagster_home`` (removed when None); what it returns is ``made``. With
        ``curation_sample`` the curation folder holds the bundled simulated review, as ``checkout``'s does."""
        self.live, self.pristine, self.dagster_home = root / "checkout", root / "pristine", dagster_home
        shutil.copytree(SAMPLE_CORPUS, self.live / "corpus")
        if curation_sample:
            shutil.copytree(PROJECT_ROOT / "data" / "curation" / "sample", self.live / "curation" / "sample")
        with pytest.MonkeyPatch.context() as patch:
            self.made = prepare(self._point(patch))
            self._close()
        shutil.copytree(self.live, self.pristine, symlinks=True)

    @property
    def home(self) -> Path:
        return self.live / "home"

    @property
    def corpus(self) -> Path:
        return self.live / "corpus"

    @property
    def curation(self) -> Path:
        return self.live / "curation"

    def use(self, monkeypatch: pytest.MonkeyPatch) -> Path:
        """The checkout as ``prepare`` left it, the environment pointed at it; returns the home."""
        self._close()
        shutil.rmtree(self.live)
        shutil.copytree(self.pristine, self.live, symlinks=True)
        return self._point(monkeypatch)

    def _point(self, monkeypatch: pytest.MonkeyPatch) -> Path:
        monkeypatch.setenv("RAG_ASSETS_HOME", str(self.home))
        monkeypatch.setenv("RAG_ASSETS_CORPUS_ROOT", str(self.corpus))
        monkeypatch.setenv("RAG_ASSETS_CURATION_ROOT", str(self.curation))
        monkeypatch.delenv("RAG_ASSETS_DATABASE_URL", raising=False)
        if self.dagster_home is None:
            monkeypatch.delenv("DAGSTER_HOME", raising=False)
        else:
            monkeypatch.setenv("DAGSTER_HOME", self.dagster_home)
        return self.home

    def _close(self) -> None:
        """Closes this process's pooled connections to the checkout's store (``get_engine`` keeps one engine per
        URL): a connection to the file replaced would read the previous test's rows."""
        get_engine(f"sqlite:///{self.home / SQLITE_FILE_NAME}").dispose()


@pytest.fixture(scope="session")
def bundled_lifecycle_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """The lifecycle job run once per worker on the sample with its bundled review (``tests.defs.lifecycle``): every
    module of the worker that starts from it gets it put back byte for byte (``SharedCheckout.use``)."""
    from tests.defs.lifecycle import bundled_lifecycle

    return bundled_lifecycle(tmp_path_factory.mktemp("lifecycle"))


@pytest.fixture
def lifecycle_run(bundled_lifecycle_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch):
    """The state after the lifecycle job ran on the sample with its bundled review, whatever an earlier test did to
    it; the environment points at it as ``project_env`` does. Returns a ``tests.defs.lifecycle.LifecycleRun``."""
    bundled_lifecycle_checkout.use(monkeypatch)
    return bundled_lifecycle_checkout.made


class FirstCliRun(NamedTuple):
    """What the first ``rag-assets run --no-production`` printed, and its summary JSON."""

    out: str
    summary: dict


@pytest.fixture(scope="session")
def first_cli_run_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """``rag-assets run --no-production`` on a fresh checkout of the sample (its bundled review applied, offline), once
    per worker; ``made`` is a ``FirstCliRun``. The CLI's tests of what a team does next (another system, a review, an
    import, a renamed document) start from it: each module used to make this same first run itself."""
    from rag_assets.cli import main

    def run(home: Path) -> FirstCliRun:
        summary, out = home.parent / "first.json", io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["run", "--no-production", "--summary-json", str(summary)]) == 0
        return FirstCliRun(out.getvalue(), json.loads(summary.read_text(encoding="utf-8")))

    return SharedCheckout(tmp_path_factory.mktemp("first-cli-run"), run)


@pytest.fixture
def first_cli_run(first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> SharedCheckout:
    """The checkout as the first CLI run left it, whatever an earlier test did to it; the environment points at it."""
    first_cli_run_checkout.use(monkeypatch)
    return first_cli_run_checkout


@pytest.fixture
def fake_claude() -> Iterator[FakeAnthropicServer]:
    """The fake Messages API on 127.0.0.1, answering the generation prompt like a model would."""
    with FakeAnthropicServer(generation_responder) as server:
        yield server


@pytest.fixture
def forget_module() -> Iterator[Callable[[str], None]]:
    """Names a module a test's run imports from a folder of its own (a team's chain): removed from sys.modules
    afterwards, so no later test of the worker imports that test's module instead of its own."""
    names: list[str] = []
    yield names.append
    for name in names:
        sys.modules.pop(name, None)
