"""``rag-assets`` that stops dead once a review import has committed its decisions and filed its file away,
before Dagster records the materialization (for a test that SIGKILLs it there).

    python -m tests.cli_killed_at_import BARRIER [rag-assets arguments]

BARRIER is written (with where the file went) when that point is reached; the process then waits to be killed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rag_assets.cli import main
from rag_assets.curation import inbox


def _hold_after(file_away, barrier: Path):
    def filed_away_then_hold(*args, **kwargs):
        result = file_away(*args, **kwargs)
        written = barrier.with_name(barrier.name + ".part")  # renamed whole: the waiting test never reads it half written
        written.write_text(str(result.moved_to), encoding="utf-8")
        written.replace(barrier)
        while True:
            time.sleep(1)

    return filed_away_then_hold


if __name__ == "__main__":
    inbox._file_away = _hold_after(inbox._file_away, Path(sys.argv[1]))
    sys.exit(main(sys.argv[2:]))
