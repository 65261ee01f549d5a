"""Score one day of production traffic: the production_sample asset's use case.

The day's logged queries are sampled (seeded by the day), judged with the reference-free metrics, saved, and
compared with the previous days; production questions no golden item resembles are coverage gaps, and may
be queued as review candidates of the newest corpus version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from rag_assets.app.review_queue import write_review_queue
from rag_assets.app.store import Store
from rag_assets.calibration.models import JudgeConfig
from rag_assets.corpus.snapshot import held_version
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import provider_label
from rag_assets.production.coverage import CoverageGap, coverage_gaps, gaps_to_candidates
from rag_assets.production.drift import DriftResult, detect_drift
from rag_assets.production.logs import LogRead, day_digests, logged_days, read_logs
from rag_assets.production.sampling import sample_day
from rag_assets.production.scoring import PRODUCTION_METRICS, score_queries
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import EvaluationOutcome
from rag_assets.scoring.scorecard import Scorecard
from rag_assets.store.production_repository import ProductionDay

#: The drop of a metric's daily mean that matters when a metric has no ``allowed_drops`` entry.
DEFAULT_ALLOWED_DROP = 0.05

#: The end of a day's data version when its coverage was not measured (no golden item to measure it against): it
#: is never the records' digest, so the CLI and the log sensor score the day again once a golden set exists.
NO_GOLDEN_SET = "+no-golden-set"


@dataclass(frozen=True)
class DayPolicy:
    """How a day is scored: sample size, the previous days of the drift baseline, each metric's allowed drop,
    the test's alpha, the similarity under which a question is a coverage gap, whether gaps are queued."""

    sample_size: int = 30
    baseline_days: int = 7
    allowed_drops: dict[str, float] = field(default_factory=dict)
    alpha: float = 0.05
    coverage_threshold: float = 0.35
    queue_coverage_gaps: bool = True

    def allowed_drop(self, metric: str) -> float:
        return self.allowed_drops.get(metric, DEFAULT_ALLOWED_DROP)


@dataclass
class ProductionDayOutcome:
    """One scored day: what was read and sampled, the scores, the drift per metric, the coverage gaps and how
    many were queued (for ``queued_version``), the previous days, the saved run's id; ``coverage_version``: the
    corpus version whose golden set the gaps were measured against (None: no golden item yet, so no gap was counted
    and none queued); ``baseline_missing``: the logged days of the drift window that are not scored (yet), which the
    baseline therefore lacks."""

    day: date
    read: LogRead
    sample_size: int
    outcome: EvaluationOutcome
    card: Scorecard
    previous: list[ProductionDay]
    run_id: str
    drift: dict[str, DriftResult]
    gaps: list[CoverageGap]
    queued: int
    queued_version: str | None
    coverage_version: str | None
    baseline_missing: list[date]

    @property
    def means(self) -> dict[str, float | None]:
        return {m: self.card.overall[m].mean for m in PRODUCTION_METRICS}

    @property
    def data_version(self) -> str:
        """A digest of the day's records: scoring the same records again would change nothing; marked when the
        coverage was not measured, since scoring them once a golden set exists would."""
        digest = day_digests(self.read.records).get(self.day.isoformat(), "no-records")
        return digest if self.coverage_version is not None else digest + NO_GOLDEN_SET


def coverage_golden_set(store: Store, corpus_root: Path) -> tuple[str | None, list[GoldenItem]]:
    """The corpus version ``corpus_root`` held at its last snapshot, and the items of the newest golden version of its
    lineage: what production's coverage is measured against (no item: nobody has built a golden set yet)."""
    version = held_version(corpus_root, store.corpus())
    return version, _golden_items(store, version)


def production_waits(store: Store, corpus_root: Path) -> str | None:
    """Why scoring production days waits, or None: with no golden item, every logged question would be a coverage
    gap and a review candidate, so the log sensor and ``rag-assets run`` score days once a golden set exists."""
    version, golden = coverage_golden_set(store, corpus_root)
    if golden:
        return None
    held = f"corpus version {version}" if version else "the corpus (no snapshot yet)"
    return f"waiting for a golden set of {held}: production's coverage gaps are measured against it"


def score_production_day(store: Store, day: date, folder: Path, judge: LLMClient, embedder: Embedder,
                         corpus_root: Path, policy: DayPolicy, outbox: Path | None = None) -> ProductionDayOutcome:
    """Score ``day`` of the logs in ``folder``; coverage is measured against the newest golden set of the corpus
    version ``corpus_root`` held at its last snapshot, and gaps are queued as its candidates, written into the review files in
    ``outbox`` at once (``app.review_queue``); with no golden item yet, no gap is counted or queued (every question
    would be one) and the data version says so. Drift compares the day with the ``policy.baseline_days`` dates before
    it that the same judge configuration scored (another judge's scores are another scale); a logged date of that
    window with no such scoring is named in ``baseline_missing``, never silently left out."""
    read = read_logs(folder, day)
    sample = sample_day(read.records, day, policy.sample_size)
    outcome = score_queries(sample, judge, store.llm_cache(), embedder)
    card = Scorecard.build(outcome, PRODUCTION_METRICS)
    repo = store.production()
    judge_now = JudgeConfig.of(judge, embedder.name).key
    previous = [d for d in repo.days(day, policy.baseline_days) if d.judge_key == judge_now]
    missing = _baseline_missing(folder, day, policy.baseline_days, {d.day for d in previous})
    run_id = repo.save(day=day, judge=provider_label(outcome.stats), judge_key=judge_now, records=len(read.records),
                       bad_lines=len(read.bad_lines), aggregates={m: a.as_dict() for m, a in card.overall.items()},
                       items=outcome.items)
    drift = {metric: detect_drift(repo.values(previous, metric),
                                  [item.values[metric] for item in outcome.items if metric in item.values],
                                  policy.allowed_drop(metric), policy.alpha, metric)
             for metric in PRODUCTION_METRICS}
    version, golden = coverage_golden_set(store, corpus_root)
    gaps = coverage_gaps(read.records, golden, embedder, policy.coverage_threshold) if golden else []
    queued = _queue_gaps(store, version, gaps, read) if policy.queue_coverage_gaps else 0
    if queued and outbox is not None:
        write_review_queue(store, outbox, version)
    return ProductionDayOutcome(day, read, len(sample), outcome, card, previous, run_id, drift, gaps, queued,
                                version if queued else None, version if golden else None, missing)


def _baseline_missing(folder: Path, day: date, window: int, scored: set[date]) -> list[date]:
    """The dates of ``day``'s drift window that have logged records but no scoring in ``scored``."""
    logged = logged_days(folder)
    dates = [day - timedelta(days=back) for back in range(window, 0, -1)]
    return [d for d in dates if d.isoformat() in logged and d not in scored]


def _queue_gaps(store: Store, version: str | None, gaps: list[CoverageGap], read: LogRead) -> int:
    """Save the gaps as pending candidates of corpus ``version``; returns how many were new."""
    if version is None or not gaps:
        return 0
    hashes = {c.chunk_id: c.content_hash for c in store.corpus().snapshot_chunks(version)}
    return store.candidates().save(gaps_to_candidates(gaps, version, {q.query_id: q for q in read.records}, hashes))


def _golden_items(store: Store, version: str | None) -> list[GoldenItem]:
    """The items of the newest golden version of ``version``'s lineage (what coverage is measured against)."""
    golden = store.golden().latest_version(store.corpus().lineage(version)) if version else None
    return store.golden().version_items(golden.number) if golden else []
