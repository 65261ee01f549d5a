"""Import the experts' review files of a corpus version: the curated_decisions asset's use case.

The store's own account of what it applied (``applied_files_digest``) is what the asset records, so a run that
finds the store ahead of the last record (a process killed between the commit and the record) can tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_assets.app.store import Store
from rag_assets.corpus.models import sha256_hex
from rag_assets.curation.inbox import CurationFolders, ImportResult, declared_corpus_version, import_review_file, inbox_files
from rag_assets.curation.models import ReviewLimits
from rag_assets.curation.review_file import read_review_file
from rag_assets.curation.accept_all import trial_candidates
from rag_assets.curation.agreement import ReviewerAgreement
from rag_assets.store.curation_repository import Conflict, SqlCurationRepository


def _digest(lines: list[str], version: str) -> str:
    return sha256_hex("\n".join(lines) or version)[:16]


def applied_files_digest(repo: SqlCurationRepository, version: str) -> str:
    """A digest of the review files applied for ``version`` (by hash): what crash recovery compares."""
    return _digest(repo.applied_files(version), version)


def decisions_digest(repo: SqlCurationRepository, version: str) -> str:
    """curated_decisions' data version: the review files applied for ``version`` and the items a trial
    (``accept_all``) made without review, so that either changing marks the golden set stale in the UI."""
    unreviewed = [f"unreviewed:{item}" for item in repo.unreviewed_items(version)]
    return _digest(repo.applied_files(version) + unreviewed, version)


def generated_versions(store: Store) -> set[str]:
    """The corpus versions whose question candidates the store holds: what a question review's ids are checked
    against when it is imported (``import_decisions`` reads the same), so a review of any other version would have
    every id rejected. The inbox sensor waits on it rather than on Dagster's record of question_candidates, which
    another instance (the CLI's home, a ``dagster dev`` elsewhere) or another store makes wrong."""
    return set(store.candidates().corpus_versions_by_id().values())


def review_files(folders: CurationFolders, version: str, names: list[str]) -> list[Path]:
    """``names`` (in the inbox, or absolute paths); none: every inbox file that declares ``version``."""
    if names:
        return [Path(name) if Path(name).is_absolute() else folders.inbox / name for name in names]
    return [p for p in inbox_files(folders.inbox) if declared_corpus_version(p) == version]


@dataclass
class DecisionImport:
    """One import: each file's result, the files named but gone, the version's standing after it (``applied``:
    the digest of its applied files, which recovery compares; ``data_version``: that and its trial items), and
    how many candidates a trial (``accept_all``) made golden items without review."""

    results: list[ImportResult]
    missing: list[Path]
    conflicts: list[Conflict]
    agreement: list[ReviewerAgreement]
    applied: str
    data_version: str
    accepted_unreviewed: int = 0

    @property
    def rejected(self) -> list[ImportResult]:
        return [r for r in self.results if r.status == "rejected"]

    @property
    def totals(self) -> dict[str, int]:
        """Each summary count (accepted, rejected, edited, ...) over the files, by name."""
        totals: dict[str, int] = {}
        for result in self.results:
            for key, value in result.summary.items():
                totals[key] = totals.get(key, 0) + value
        return dict(sorted(totals.items()))


def import_decisions(store: Store, folders: CurationFolders, limits: ReviewLimits, version: str,
                     names: list[str], accept_all: bool = False) -> DecisionImport:
    """Validate, apply and file away each review file (a file applied before is recognised by its hash); then,
    with ``accept_all`` (trial mode, :mod:`rag_assets.curation.accept_all`), make every candidate still pending
    a golden item labelled unreviewed."""
    files = review_files(folders, version, names)
    missing = [path for path in files if not path.exists()]  # before the import moves the others away
    repo = store.curation()
    known = store.candidates().corpus_versions_by_id()
    results = [import_review_file(path, folders, known, read_review_file, repo.apply_review, limits, repo.is_applied)
               for path in files if path not in missing]
    trial = repo.accept_unreviewed(trial_candidates(store.candidates().for_version(version, status="pending"))
                                   ) if accept_all else 0
    return DecisionImport(results, missing, repo.conflicts(version),
                          repo.reviewer_agreement(version), applied_files_digest(repo, version),
                          decisions_digest(repo, version), trial)
