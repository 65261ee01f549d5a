"""The curation inbox: route reviewed files, apply or reject each one whole, and file it away.

A file that validates is applied in one transaction and moved to ``processed/``; one that does
not is moved to ``rejected/`` with an error report beside it naming row, field and problem, and
nothing from it is applied. A failure of the store itself leaves the file in the inbox.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.corpus.models import sha256_hex
from rag_assets.curation.models import ReviewFile, ReviewLimits, ReviewProblem
from rag_assets.curation.review_file import REVIEW_FORMATS, declared_version, unsupported_reason
from rag_assets.errors import ReviewFileRejected
from rag_assets.files import UnsafeFile, is_regular_file, read_regular_file

REVIEW_SUFFIXES = tuple(REVIEW_FORMATS)
_VERSION_IN_NAME = re.compile(r"cv-[0-9a-f]{12}")


@dataclass(frozen=True)
class CurationFolders:
    root: Path

    @property
    def inbox(self) -> Path:
        return self.root / "inbox"

    @property
    def outbox(self) -> Path:
        return self.root / "outbox"

    @property
    def processed(self) -> Path:
        return self.root / "processed"

    @property
    def rejected(self) -> Path:
        return self.root / "rejected"


@dataclass
class ImportResult:
    source: str
    sha256: str
    status: str  # applied | already_applied | rejected
    moved_to: Path | None = None
    report: Path | None = None
    problems: list[ReviewProblem] = field(default_factory=list)
    summary: dict[str, int] = field(default_factory=dict)


def _ignored(path: Path) -> bool:
    """Hidden files and office lock files (``.~lock.x.csv#``, ``~$x.csv``): a save in progress, not a submission."""
    return path.name.startswith((".", "~$"))


def inbox_files(inbox: Path) -> list[Path]:
    """The review files waiting in the inbox, by name: regular files only, never what a link leads to."""
    if not inbox.is_dir():
        return []
    return sorted(p for p in inbox.iterdir()
                  if is_regular_file(p) and p.suffix.lower() in REVIEW_SUFFIXES and not _ignored(p))


def unsupported_entries(inbox: Path) -> list[Path]:
    """Folders, links and files of other types in the inbox: they are rejected, never left there unmentioned."""
    if not inbox.is_dir():
        return []
    return sorted(p for p in inbox.iterdir() if not _ignored(p) and (not is_regular_file(p) or p.suffix.lower()
                                                                     not in REVIEW_SUFFIXES))


def file_sha256(path: Path) -> str:
    """The hash of a file's bytes, read in blocks (a file near the size limit is not held in memory)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def reject_oversized(path: Path, folders: CurationFolders, limits: ReviewLimits) -> ImportResult | None:
    """Move a file over the size limit to rejected/ with the reason, decided from its size alone: it is
    never read (nor hashed), and once moved no later sensor tick sees it again. None when it fits."""
    stat = path.stat()
    problem = limits.size_problem(stat.st_size)
    if problem is None:
        return None
    return reject_file(path, folders, sha256_hex(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}"),
                       [ReviewProblem(None, None, problem)])


def inbox_sha256(path: Path) -> str:
    """The hash of an inbox file, read without following a link (UnsafeFile, an OSError, if it is one now)."""
    return hashlib.sha256(read_regular_file(path)).hexdigest()


def declared_corpus_version(path: Path) -> str | None:
    """The corpus version a file says it is for: in its name, else in its corpus_version column."""
    match = _VERSION_IN_NAME.search(path.name)
    return match.group(0) if match else declared_version(path)


def reject_unsupported(path: Path, folders: CurationFolders) -> ImportResult:
    """Move a folder or a file that is no review file to rejected/ with the reason beside it."""
    return reject_file(path, folders, sha256_hex(path.name), [ReviewProblem(None, None, unsupported_reason(path))])


def _unique_target(folder: Path, name: str, sha256: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    return target if not target.exists() else folder / f"{Path(name).stem}.{sha256[:8]}{Path(name).suffix}"


def reject_file(path: Path, folders: CurationFolders, sha256: str, problems: list[ReviewProblem]) -> ImportResult:
    """Move a file to rejected/ and write its error report beside it."""
    target = _unique_target(folders.rejected, path.name, sha256)
    path.replace(target)
    report = target.with_name(target.name + ".errors.txt")
    lines = [f"{target.name} was rejected; nothing from it was applied. Fix these and drop it in the inbox again:", ""]
    report.write_text("\n".join(lines + [f"- {p}" for p in problems]) + "\n", encoding="utf-8")
    target.with_name(target.name + ".errors.json").write_text(json.dumps(
        [{**({"sheet": p.sheet} if p.sheet else {}), "row": p.row, "field": p.field, "problem": p.message}
         for p in problems], indent=2), encoding="utf-8")
    return ImportResult(path.name, sha256, "rejected", target, report, problems)


def import_review_file(
    path: Path,
    folders: CurationFolders,
    known_candidates: Mapping[str, str],
    read: Callable[[Path, Mapping[str, str], ReviewLimits], ReviewFile],
    apply: Callable[[ReviewFile], object],
    limits: ReviewLimits = ReviewLimits(),
    is_applied: Callable[[str], bool] | None = None,
) -> ImportResult:
    """Validate, apply (one transaction) and file away one review file.

    A file over the size limit is rejected before it is read. With ``is_applied``, a file whose hash
    was applied already is filed away before it is parsed: validating it again (great-expectations
    is a seconds-long import) could change nothing.
    """
    oversized = reject_oversized(path, folders, limits)
    if oversized is not None:
        return oversized
    try:
        sha256 = inbox_sha256(path)
    except UnsafeFile as exc:  # swapped for a link or a folder since the inbox was listed
        return reject_file(path, folders, sha256_hex(path.name),
                           [ReviewProblem(None, None, f"cannot read the file: {exc.strerror}")])
    if is_applied is not None and is_applied(sha256):
        return _file_away(path, folders, sha256, "already_applied", {})
    try:
        review = read(path, known_candidates, limits)
        outcome = apply(review)
    except ReviewFileRejected as exc:
        return reject_file(path, folders, sha256, list(exc.problems))
    status = "already_applied" if getattr(outcome, "already_applied", False) else "applied"
    summary = {k: v for k, v in vars(outcome).items() if isinstance(v, int) and not isinstance(v, bool)}
    return _file_away(path, folders, sha256, status, summary)


def _file_away(path: Path, folders: CurationFolders, sha256: str, status: str, summary: dict[str, int]) -> ImportResult:
    """Move an applied file to processed/. Gone already: another run importing the same file at the same time (under
    dagster dev the inbox sensor's import and an automated judge_calibration may both read a judge review) applied
    it and filed it away first; the store applied it once (the second apply is ``already_applied``), so this run
    says so instead of failing on the move."""
    target = _unique_target(folders.processed, path.name, sha256)
    try:
        path.replace(target)
    except FileNotFoundError:
        return ImportResult(path.name, sha256, "already_applied", None, summary=summary)
    return ImportResult(path.name, sha256, status, target, summary=summary)
