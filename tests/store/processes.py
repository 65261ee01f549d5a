"""Python processes that a store test starts at the same moment, whatever the machine's load.

A start time a few seconds ahead is no barrier: a loaded machine can take longer than that to import
the project, so one process finishes before the other begins and the race under test never happens
(or, where a test needs the second to find the first still working, it fails). Each script here
says ``READY`` once its imports and set-up are done and waits for a line on its standard input;
``start_together`` releases them all only when every one is ready.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from tests.conftest import PROJECT_ROOT

# The line a script puts where every process must start at once.
AWAIT_GO = 'print("READY", flush=True); sys.stdin.readline()'
TIMEOUT = 300  # a bound for a broken test, not an expected duration


def launch(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=PROJECT_ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_line(process: subprocess.Popen, starts: str) -> str:
    """The next line the process prints, which must start with ``starts`` (else its stderr is shown)."""
    line = process.stdout.readline()
    if not line.startswith(starts):
        process.kill()
        raise AssertionError(f"expected {starts!r}, got {line!r}; stderr: {process.stderr.read()[-3000:]}")
    return line.rstrip("\n")


def go(process: subprocess.Popen) -> None:
    process.stdin.write("go\n")
    process.stdin.flush()


def finish(process: subprocess.Popen) -> str:
    """What the process printed after the lines already read; it must exit 0."""
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, err[-3000:]
    return out


def start_together(code: str, arguments: Sequence[Sequence[str]]) -> list[str]:
    """Run ``code`` once per argument list, released together; their outputs after READY, in order."""
    processes = [launch(code, *args) for args in arguments]
    for process in processes:
        read_line(process, "READY")
    for process in processes:
        go(process)
    return [finish(process) for process in processes]
