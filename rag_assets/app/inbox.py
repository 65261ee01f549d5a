"""One look at the curation inbox: the inbox sensor's use case.

Files that can never be imported (folders, other file types, files over the size limit, files naming no
known corpus version, files whose runs failed ``IMPORT_ATTEMPTS`` times) are moved to rejected/ with a
report; every other new or failed file gets a run to request. What a file gets is decided by
``rag_assets.curation.inbox_rounds``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_assets.calibration.review_file import is_judge_review
from rag_assets.curation.inbox import (CurationFolders, declared_corpus_version, inbox_files, inbox_sha256, reject_file,
                                       reject_oversized, reject_unsupported, unsupported_entries)
from rag_assets.curation.inbox_rounds import FileState, Generated, RunStatus, dump_cursor, load_cursor, next_step
from rag_assets.curation.models import ReviewLimits, ReviewProblem


@dataclass(frozen=True)
class ImportRun:
    """A run to request for ``path``: a judge review's calibration, or the import of a question review of
    corpus ``version``; ``state`` holds its run key and its attempt in the round."""

    path: Path
    version: str | None
    judge_review: bool
    state: FileState


@dataclass(frozen=True)
class InboxScan:
    """The runs to request, the names of the files rejected and of those requested again, the next cursor, and
    each file that waits for its corpus version's candidates, with why."""

    runs: list[ImportRun]
    rejected: list[str]
    retried: list[str]
    cursor: str
    waiting: list[str]


def scan_inbox(folders: CurationFolders, limits: ReviewLimits, cursor: str | None, known: set[str],
               run_status: RunStatus, generated: Generated) -> InboxScan:
    """Look at every inbox entry once; ``known``: the corpus versions with a partition; ``generated``: whether the
    store holds a version's question candidates (a review of a version without them, or without a partition, waits
    in the inbox)."""
    states = load_cursor(cursor)
    runs: list[ImportRun] = []
    rejected: list[str] = []
    retried: list[str] = []
    waiting: list[str] = []
    for entry in unsupported_entries(folders.inbox):
        reject_unsupported(entry, folders)
        rejected.append(entry.name)
    for path in inbox_files(folders.inbox):
        if reject_oversized(path, folders, limits) is not None:
            rejected.append(path.name)
            continue
        try:
            digest = inbox_sha256(path)
        except OSError:  # gone, or swapped for a link, since the listing: the next tick sees what is there
            continue
        judge_review = is_judge_review(path, limits)
        version = None if judge_review else declared_corpus_version(path)
        step = next_step(states.get(digest, FileState()), digest, run_status, version, judge_review, known, generated)
        states[digest] = step.state
        if step.action == "wait" and step.problem:
            waiting.append(f"{path.name} ({step.problem})")
        if step.action == "reject":
            reject_file(path, folders, digest, [ReviewProblem(None, step.field, step.problem)])
            rejected.append(path.name)
        elif step.action in ("request", "retry"):
            runs.append(ImportRun(path, version, judge_review, step.state))
            if step.action == "retry":
                retried.append(path.name)
    return InboxScan(runs, rejected, retried, dump_cursor(states), waiting)
