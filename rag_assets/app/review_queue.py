"""The experts' review files of a corpus version: every pending candidate, and every conflict, with its evidence.

The ``curation_queue`` asset writes them, and so does a production day that queues coverage gaps as candidates:
the day runs after the queue was written, and nothing the queue's asset reads changes with it, so without this
what production traffic queued would wait, unseen by the experts, until the corpus changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rag_assets.app.store import Store
from rag_assets.curation.queue import outbox_paths, review_rows, workbook_rows
from rag_assets.curation.review_writer import write_review_files
from rag_assets.curation.workbook import write_review_workbook
from rag_assets.generation.models import Candidate
from rag_assets.store.curation_repository import CONFLICT


@dataclass(frozen=True)
class ReviewQueue:
    """What the review files hold (``rows``: one per candidate to decide) and where they are."""

    pending: list[Candidate]
    conflicts: Mapping[str, object]
    rows: list[dict[str, str]]
    csv_path: Path
    jsonl_path: Path
    xlsx_path: Path


def awaiting_review(store: Store, version: str) -> list[Candidate]:
    """What waits for a person in corpus ``version``, as the store holds it now: the candidates without a decision
    and those whose reviewers disagree (adjudication), the rows the review file lists. The one definition behind the
    curation_queue asset's ``pending``, ``rag-assets run``'s summary and ``rag-assets status``: counting the pending
    candidates alone told a team whose reviewers disagreed on everything that nothing was left to review."""
    return store.candidates().for_version(version, status="pending") + in_conflict(store, version)


def in_conflict(store: Store, version: str) -> list[Candidate]:
    """The candidates of corpus ``version`` whose reviewers disagree: reviewed, but waiting for one decision (the
    reviewers agreeing, or an ``adjudicator:<name>``)."""
    return store.candidates().for_version(version, status=CONFLICT)


def write_review_queue(store: Store, outbox: Path, version: str) -> ReviewQueue:
    """Write the review files of corpus ``version`` into ``outbox``: its pending candidates and the candidates
    whose reviewers disagree, as CSV, JSONL and an .xlsx workbook."""
    conflicts = {c.candidate_id: c.decisions for c in store.curation().conflicts(version)}
    pending = awaiting_review(store, version)
    chunks = {c.chunk_id: c for c in store.corpus().snapshot_chunks(version)}
    rows = review_rows(pending, chunks, conflicts=conflicts)
    csv_path, jsonl_path = outbox_paths(outbox, version)
    write_review_files(rows, csv_path, jsonl_path)
    xlsx_path = write_review_workbook(workbook_rows(pending, chunks, rows, conflicts), csv_path.with_suffix(".xlsx"))
    return ReviewQueue(pending, conflicts, rows, csv_path, jsonl_path, xlsx_path)
