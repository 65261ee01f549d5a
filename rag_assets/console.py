"""Keep the terminal for what a person reads: the summary.

Dagster logs every event of a run (hundreds of DEBUG lines) and the code location's preview
warnings to stderr. The CLI sends both to a log file in the project's home instead, names that
file in its closing lines, and streams it only with ``--verbose``. Every event also stays in the
Dagster instance, where ``dagster dev`` shows it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

LOG_FILE = Path("logs") / "rag-assets.log"


@contextlib.contextmanager
def event_log(home: Path, stream: bool) -> Iterator[Path | None]:
    """Within the block, stderr (Dagster's console logger writes there) and warnings go to the log file.

    Dagster's console handler looks stderr up when it emits, so redirecting ``sys.stderr`` catches
    every run's events without touching Dagster's logger configuration, which ``dagster dev`` shares.
    """
    if stream:
        yield None
        return
    path = home / LOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log, contextlib.redirect_stderr(log), warnings.catch_warnings():
        warnings.simplefilter("default")
        log.write(f"\n==== rag-assets {' '.join(sys.argv[1:])} at {dt.datetime.now(dt.timezone.utc).isoformat()} ====\n")
        yield path
