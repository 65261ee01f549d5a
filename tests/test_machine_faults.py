"""Faults of the machine, driven for real: a full disk (a 2 MB tmpfs), a read-only home (a tmpfs
remounted read-only), a store whose pages were overwritten, and a store another process holds with
BEGIN EXCLUSIVE. Each stops ``rag-assets run`` with one line naming the file and what to do, exit 1,
and nothing staged or saved."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.store.engine import get_engine
from tests.conftest import PROJECT_ROOT
from tests.store.processes import launch, read_line

PAGE = 4096  # SQLite's default page size


@contextmanager
def tmpfs(where: Path, size: str = "2m") -> Iterator[Path]:
    """A real tmpfs of ``size`` mounted at ``where`` (root only); the test skips where mounting is not allowed."""
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or 'mount failed'}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def _run_fails_with_one_line(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["run", "--no-production", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.rstrip("\n")


def _inbox(project_env: Path) -> list[str]:
    inbox = project_env.parent / "curation" / "inbox"
    return sorted(p.name for p in inbox.iterdir()) if inbox.exists() else []


def test_a_full_disk_names_the_store_and_says_to_free_space(project_env: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]):
    with tmpfs(tmp_path / "small") as disk:
        filler = disk / "filler"
        with filler.open("wb") as out:  # fill it to the last 16 KB: the home's folders fit, the store does not
            out.write(b"\0" * (os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize - 16 * 1024))
        home = disk / "home"
        monkeypatch.setenv("RAG_ASSETS_HOME", str(home))
        line = _run_fails_with_one_line(capsys)
    assert line.startswith(f"error: cannot write the store {home / 'rag_assets.db'}: the disk is full (")
    assert line.endswith(f"free space there or set RAG_ASSETS_HOME to a folder on another disk")
    assert _inbox(project_env) == [], "no review file was staged"


def test_a_read_only_home_names_the_folder_and_says_what_to_set(project_env: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]):
    with tmpfs(tmp_path / "ro") as home:
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(home)], capture_output=True, text=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount a tmpfs read-only here: {remounted.stderr.strip()}")
        monkeypatch.setenv("RAG_ASSETS_HOME", str(home))
        line = _run_fails_with_one_line(capsys)
    assert line == (f"error: cannot write {home / 'logs'}: Read-only file system; set RAG_ASSETS_HOME (or the "
                    "setting that names it) to a writable folder")
    assert _inbox(project_env) == []


def test_a_corrupt_store_is_named_with_what_to_do(project_env: Path, capsys: pytest.CaptureFixture[str]):
    database = project_env / "rag_assets.db"
    engine = get_engine(f"sqlite:///{database}")  # a real store: every table created
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    data = bytearray(database.read_bytes())
    assert len(data) > 4 * PAGE
    data[PAGE:] = b"\xa5" * (len(data) - PAGE)  # every page but the schema's first one overwritten
    database.write_bytes(bytes(data))
    line = _run_fails_with_one_line(capsys)
    assert line.startswith(f"error: the store {database} is damaged (")
    assert line.endswith("); restore it from a backup, or move it away to start an empty store")
    assert _inbox(project_env) == []


HOLD_EXCLUSIVE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("READY", flush=True)
sys.stdin.readline()
"""


def test_a_store_locked_by_another_process_names_the_file_and_the_holder(project_env: Path):
    database = project_env / "rag_assets.db"
    get_engine(f"sqlite:///{database}").dispose()
    holder = launch(HOLD_EXCLUSIVE, str(database))
    try:
        read_line(holder, "READY")
        cli = subprocess.run([sys.executable, "-m", "rag_assets.cli", "run", "--no-production"], cwd=PROJECT_ROOT,
                             capture_output=True, text=True, timeout=300, env=os.environ.copy())
    finally:
        holder.communicate("go\n", timeout=60)
    assert cli.returncode == 1, cli.stderr[-3000:]
    assert cli.stderr.startswith(f"error: the store {database} stayed locked by pid {holder.pid} ({sys.executable} -c ")
    assert cli.stderr.endswith(") for 15 s; let that process finish or stop it, then run again\n")
    assert cli.stderr.count("\n") == 1
    assert _inbox(project_env) == []
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM corpus_snapshot").fetchone() == (0,)
