"""Golden-set exports are files for people to share: created as ``open`` creates a file (0666 less the umask,
0644 under the usual 022), not with the 0600 of a temporary file, whatever file they replace."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkRef
from rag_assets.golden.export import write_golden
from rag_assets.golden.models import GoldenItem

ITEM = GoldenItem("g1", 1, "factual", "What is kept?", "Everything.", (ChunkRef("c1", "h1"),), "cv-1")
FILES = [("jsonl", "golden.jsonl"), ("ragas", "golden.ragas.jsonl"), ("ragas", "golden.ragas.csv"),
         ("csv", "golden.csv")]


@pytest.fixture
def umask() -> Iterator[None]:
    """Restores the process's umask after a test that sets its own."""
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.mark.parametrize(("file_format", "name"), FILES)
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640)], ids=["umask 022", "umask 027"])
def test_an_export_gets_the_mode_open_would_give_it(tmp_path: Path, umask: None, file_format: str, name: str,
                                                    mask: int, mode: int):
    target = tmp_path / name
    target.write_text("an earlier export, private\n")
    target.chmod(0o600)
    os.umask(mask)
    write_golden([ITEM], target, file_format, {"c1": "Everything is kept."})
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == [name], "no temporary file is left beside it"
