"""One look at the production log folder: the production log sensor's use case (what changed since its cursor)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_assets.curation.inbox import file_sha256
from rag_assets.production.log_watch import LogCursor
from rag_assets.production.logs import file_days, log_files


@dataclass(frozen=True)
class LogScan:
    """The cursor with every changed file recorded, and the files that could not be read: (name, reason)."""

    cursor: LogCursor
    unreadable: list[tuple[str, str]]


def scan_logs(folder: Path, cursor: str | None) -> LogScan:
    """Hash every log file of ``folder``; the folder's day index is read once, and only when a file changed."""
    seen, unreadable = LogCursor.load(cursor), []
    per_file = None
    for path in log_files(folder):
        try:
            sha = file_sha256(path)
        except OSError as exc:  # removed or unreadable between listing and reading: look again next tick
            unreadable.append((path.name, str(exc.strerror or exc)))
            continue
        if seen.changed(path.name, sha):
            per_file = per_file if per_file is not None else file_days(folder)
            seen.record(path.name, sha, per_file.get(path.name, {}))
    return LogScan(seen, unreadable)
