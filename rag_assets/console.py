"""Keep the terminal for what a person reads: the summary.

Dagster logs every event of a run (hundreds of DEBUG lines) and the code location's preview
warnings to stderr. The CLI sends both to a log file in the project's home instead, names that
file in its closing lines, and streams it only with ``--verbose``. Every event also stays in the
Dagster instance, where ``dagster dev`` shows it.

Long steps (RAG answers, judging, generation) show items done / total, rate and ETA on the
terminal while a person watches, and nothing at all in CI or when the output is not a terminal.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from rag_assets.settings import Settings, current_settings

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


class Progress:
    """``label: done/total  rate/s  ETA`` redrawn in place on one terminal line, at most every
    ``interval`` seconds, finished with a newline at the last item. Told ``(done, total)`` by the
    loop it watches; a new total (the next shard, the next batch of calls) starts the count again."""

    def __init__(self, label: str, stream: TextIO, interval: float = 0.2,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.stream, self.interval, self.clock = label, stream, interval, clock
        self.started = self.previous = clock()
        self.shown, self.last = -interval, 0

    def line(self, done: int, total: int) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = done / elapsed
        eta = f"ETA {(total - done) / rate:.0f}s" if rate and done < total else f"took {elapsed:.0f}s"
        return f"{self.label}: {done}/{total}  {rate:.1f}/s  {eta}"

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done <= self.last:  # a new count (the next shard, the next batch of calls) began when the last ended
            self.started = self.previous
        self.last, self.previous = done, now
        if done >= total or now - self.shown >= self.interval:
            self.shown = now
            self.stream.write("\r" + self.line(done, total) + ("\n" if done >= total else ""))
            self.stream.flush()


def _interactive(stream: TextIO, settings: Settings) -> bool:
    """A person is watching: a terminal, not a CI job (CI runners set CI=true, some on a pseudo-TTY), and
    not a process of ``dagster dev`` (it sets DAGSTER_IS_DEV_CLI; its terminal interleaves every run's logs)."""
    return stream.isatty() and not settings.ci and not settings.dagster_dev


def terminal_progress(label: str, stream: TextIO | None = None,
                      settings: Settings | None = None) -> Callable[[int, int], None] | None:
    """A progress callback for a long loop when a person watches the terminal; None otherwise, so
    logs, CI and ``dagster dev`` stay plain. The terminal is the process's own stderr, which
    ``event_log`` leaves alone while it sends Dagster's events to the log file."""
    stream = stream or sys.__stderr__
    if stream is None or not _interactive(stream, settings or current_settings()):
        return None
    return Progress(label, stream)
