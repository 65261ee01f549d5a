"""Decide a corpus version's review queue as the simulated expert would: the ``simulate-review`` command's use case.

It stands in for the expert on a demo or in a test, so the whole lifecycle runs unattended; the decisions are a
review file like an expert's, which a run then applies as it would theirs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rag_assets.curation.inbox import CurationFolders
from rag_assets.curation.queue import outbox_paths
from rag_assets.curation.review_writer import write_review_files
from rag_assets.curation.simulate import simulate_review
from rag_assets.errors import RagAssetsError

#: The folder under the curation root where simulated reviews are written, and where a run looks for one.
SAMPLE_REVIEWS = "sample"


class NoReviewQueue(RagAssetsError):
    """The outbox holds no review queue of the corpus version."""


@dataclass(frozen=True)
class SimulatedReview:
    """How many candidates were decided, and the review file (CSV) the decisions are in."""

    rows: int
    path: Path


def sample_review_path(curation_root: Path, version: str) -> Path:
    """Where the simulated review of ``version`` is written by default, and where a run picks it up."""
    return curation_root / SAMPLE_REVIEWS / f"review-{version}.csv"


def simulate_review_queue(curation_root: Path, version: str, out: Path | None = None) -> SimulatedReview:
    """Decide every row of ``version``'s queue in the outbox and write them as a review CSV to ``out`` (by
    default :func:`sample_review_path`); only the CSV is kept, as an expert returns one file."""
    queue = outbox_paths(CurationFolders(curation_root).outbox, version)[1]
    if not queue.exists():
        raise NoReviewQueue(f"no review queue {queue}; run `rag-assets run --no-review` first")
    rows = simulate_review([json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines() if line.strip()])
    written = out or sample_review_path(curation_root, version)
    written.parent.mkdir(parents=True, exist_ok=True)
    write_review_files(rows, written, written.with_suffix(".jsonl"))
    written.with_suffix(".jsonl").unlink()
    return SimulatedReview(len(rows), written)
