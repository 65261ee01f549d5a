"""Hostile inbox entries through the real import path: a file swapped for a link after the inbox was
listed is not read through the link, what is echoed from a bad cell is a short excerpt, and a file another run
filed away in between is not a failed run."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rag_assets.curation.inbox import CurationFolders, import_review_file, inbox_files
from rag_assets.curation.models import OUTBOX_COLUMNS
from rag_assets.curation.review_file import read_review_file

VERSION = "cv-0123456789ab"


def _review(candidate_id: str) -> str:
    cells = {"candidate_id": candidate_id, "corpus_version": VERSION, "decision": "accept", "reviewer": "ana"}
    return ",".join(OUTBOX_COLUMNS) + "\n" + ",".join(cells.get(name, "") for name in OUTBOX_COLUMNS) + "\n"


def _never_applied(review) -> None:
    raise AssertionError("a rejected file must not be applied")


@pytest.fixture
def folders(tmp_path: Path) -> CurationFolders:
    folders = CurationFolders(tmp_path / "curation")
    folders.inbox.mkdir(parents=True)
    return folders


def test_a_file_swapped_for_a_link_after_the_listing_is_rejected_unread(folders: CurationFolders, tmp_path: Path):
    secret = tmp_path / "outside" / "secret.csv"
    secret.parent.mkdir()
    secret.write_text(_review("TOPSECRET-hunter2"))
    secret.chmod(0o600)
    path = folders.inbox / f"review-{VERSION}.csv"
    path.write_text(_review("q-000000000001"))
    assert inbox_files(folders.inbox) == [path]  # the walk saw a regular file
    path.unlink()
    path.symlink_to(secret)  # ... which is a link when the import reads it

    result = import_review_file(path, folders, {}, read_review_file, _never_applied)

    assert result.status == "rejected" and result.moved_to is not None and result.moved_to.is_symlink()
    assert [str(p) for p in result.problems] == ["file: cannot read the file: symbolic link; links are not followed"]
    written = b"".join(p.read_bytes() for p in folders.rejected.iterdir() if not p.is_symlink())
    assert b"TOPSECRET" not in written and b"symbolic link" in written


def test_a_long_bad_cell_is_echoed_as_a_short_excerpt(folders: CurationFolders):
    path = folders.inbox / f"review-{VERSION}.csv"
    path.write_text(_review("q-" + "x" * 200 + "END"))

    result = import_review_file(path, folders, {}, read_review_file, _never_applied)

    assert [str(p) for p in result.problems] == [
        f"row 2, candidate_id: unknown candidate id 'q-{'x' * 37}…' (205 characters)"]
    assert b"END" not in b"".join(p.read_bytes() for p in folders.rejected.glob("*.errors.*"))


def test_a_file_another_run_filed_away_while_this_one_applied_it_is_already_applied_not_a_failed_run(
        folders: CurationFolders):
    """Two runs importing one file at once (the inbox sensor's import and an automated judge_calibration): the store
    applies it once; the run whose move finds it gone says so instead of failing."""
    path = folders.inbox / f"review-{VERSION}.csv"
    path.write_text(_review("q-1"))

    def applied_while_the_other_run_files_it_away(review) -> SimpleNamespace:
        folders.processed.mkdir()
        path.replace(folders.processed / path.name)
        return SimpleNamespace(decisions=1)

    result = import_review_file(path, folders, {"q-1": VERSION}, read_review_file,
                                applied_while_the_other_run_files_it_away)

    assert (result.status, result.moved_to) == ("already_applied", None)
    assert [p.name for p in folders.processed.iterdir()] == [path.name]
