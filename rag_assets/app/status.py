"""What a store holds and what waits for a person: the ``rag-assets status`` use case."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_assets.app.review_queue import awaiting_review
from rag_assets.app.store import Store
from rag_assets.curation.accept_all import unreviewed
from rag_assets.curation.inbox import CurationFolders, declared_corpus_version, inbox_files
from rag_assets.curation.queue import outbox_paths
from rag_assets.store.evaluation_repository import EvaluationRecord
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.store.golden_repository import GoldenVersion



@dataclass
class Status:
    """Corpus versions (id, created, documents, chunks, root), golden versions, evaluations (oldest first), and
    one line per thing that waits for a person."""

    corpus_versions: list[tuple[str, str, int, int, str]]
    golden_versions: list[GoldenVersion]
    evaluations: list[EvaluationRecord]
    waiting: list[str]


def key_figures(record: EvaluationRecord) -> dict[str, float]:
    """The headline metrics' means (``Metric.headline``) the evaluation has, shown beside it."""
    overall = record.aggregates.get("overall", {})
    return {m: overall[m]["mean"] for m in REGISTRY.headline(record.k) if isinstance(overall.get(m), dict)
            and overall[m].get("mean") is not None}


def _inbox_line(path: Path, held: str | None) -> str:
    declared = declared_corpus_version(path)
    if declared and held and declared != held:
        return (f"review file in the inbox for corpus version {declared}, not {held} the corpus holds: "
                f"`rag-assets run` does not import it (the inbox sensor imports it into {declared} only); review "
                f"{held}'s candidates instead: {path}")
    return f"review file in the inbox, to import with `rag-assets run`: {path}"


def store_status(store: Store, curation_root: Path, held: str | None = None, limit: int = 20) -> Status:
    """The store's newest ``limit`` evaluations and everything else it holds, and what waits: review files in
    the inbox and candidates without a decision of ``held``, the corpus version the folder held at its last snapshot
    (else the newest; production traffic adds some)."""
    corpus_versions = store.corpus().versions()
    version = held or (corpus_versions[-1][0] if corpus_versions else None)
    waiting = [_inbox_line(path, version) for path in inbox_files(CurationFolders(curation_root).inbox)]
    if version:
        pending = len(awaiting_review(store, version))
        outbox = outbox_paths(CurationFolders(curation_root).outbox, version)[0]
        trial = len(unreviewed(store.golden().accepted_items(store.corpus().lineage(version) or [version])))
        if pending:
            waiting.append(f"{pending} candidate questions of {version} wait for a review decision (undecided, or "
                           "reviewers disagree)"
                           + (f" (review file: {outbox})" if outbox.exists() else "")
                           + (f"; {trial} of them are in the golden set unreviewed (--accept-all)" if trial else ""))
    return Status(corpus_versions, store.golden().versions(), store.evaluations().history(limit=limit), waiting)
