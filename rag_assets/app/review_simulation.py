"""Decide a corpus version's review queue as the simulated expert would: the ``simulate-review`` command's use case.

It stands in for the expert on a demo or in a test, so the whole lifecycle runs unattended; the decisions are a
review file like an expert's, which a run then applies as it would theirs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rag_assets.curation.inbox import CurationFolders
from rag_assets.curation.models import ReviewLimits
from rag_assets.curation.queue import outbox_paths
from rag_assets.curation.review_file import read_review_file
from rag_assets.curation.review_writer import write_review_files
from rag_assets.curation.simulate import simulate_review
from rag_assets.errors import RagAssetsError, ReviewFileRejected

#: The folder under the curation root where simulated reviews are written, and where a run looks for one.
SAMPLE_REVIEWS = "sample"
#: The folder under the curation root where a run writes the simulated review of candidates the one in
#: ``SAMPLE_REVIEWS`` does not review: beside it, never over it (that one is the checkout's own file).
RUN_REVIEWS = "simulated"


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
    rows = simulate_review(_queued(curation_root, version))
    written = out or sample_review_path(curation_root, version)
    written.parent.mkdir(parents=True, exist_ok=True)
    write_review_files(rows, written, written.with_suffix(".jsonl"))
    written.with_suffix(".jsonl").unlink()
    return SimulatedReview(len(rows), written)


def expert_review(curation_root: Path, version: str, candidates: Mapping[str, str],
                  limits: ReviewLimits = ReviewLimits()) -> Path | None:
    """The simulated expert's review of ``version``'s candidates, for a run to import: the one in the sample folder
    (:func:`sample_review_path`, which must exist) when its import would take it against ``candidates`` (every
    candidate id to its corpus version, as the store has them), else the queue decided now by
    :func:`simulate_review_queue` into ``RUN_REVIEWS``; None when that queue is empty (everything is decided: a
    file without rows is rejected). The bundled review of the sample corpus is the offline generator's candidates;
    another generator (Claude, with a key) writes other ones, and that file failed the run with "unknown candidate
    id"."""
    sample = sample_review_path(curation_root, version)
    try:
        read_review_file(sample, candidates, limits)
    except ReviewFileRejected:
        if not _queued(curation_root, version):
            return None
        return simulate_review_queue(curation_root, version, curation_root / RUN_REVIEWS / sample.name).path
    return sample


def _queued(curation_root: Path, version: str) -> list[dict]:
    """The rows of ``version``'s review queue in the outbox: the candidates waiting for a decision."""
    queue = outbox_paths(CurationFolders(curation_root).outbox, version)[1]
    if not queue.exists():
        raise NoReviewQueue(f"no review queue {queue}; run `rag-assets run --no-review` first")
    return [json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines() if line.strip()]
