"""Score a RAG run's answers on a golden set, gate the scores and report them: the evaluation asset's use case
and ``rag_assets.evaluate``'s, composed once.

Both entry points judge with ``judge_answers`` (the asset per judge shard through ``judge_run_items``, the
API through ``evaluate_golden``, which also states the references and asks the system, as the golden_set and
rag_answers assets do), gate with ``assess`` and render the report with ``render_report``, so the Python API
and the asset cannot drift apart on a figure. The asset's merge adds what only a stored evaluation has
(``evaluate_run``): the baseline and the diff against it, the saved evaluation, the judge review for the
experts, the report written and published, all discarded together when a step fails.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rag_assets.app.judge_review import ReviewSent, send_judge_review
from rag_assets.app.store import Store
from rag_assets.calibration.models import JudgeConfig, comparable_metrics
from rag_assets.calibration.sample import DEFAULT_SAMPLE_SIZE
from rag_assets.corpus.models import SnapshotChunk
from rag_assets.errors import RagAssetsError
from rag_assets.evidence.documents import Documents
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.llm.results import provider_label
from rag_assets.rag.chunks import SnapshotChunks
from rag_assets.rag.models import RagResponse
from rag_assets.rag.system import RagSystem, answer_items, config_hash
from rag_assets.report.build import Report, build_report
from rag_assets.report.compare import EvaluationDiff, diff_evaluations, stored_judge_budget
from rag_assets.report.publish import publish_report
from rag_assets.scoring.embedding import Embedder
from rag_assets.scoring.evaluate import EvaluationOutcome, JudgeFailureBudget, score_answers, with_statement_calls
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.retrieval import RULES as RETRIEVAL_RULES, RULES_KEY, counted_under
from rag_assets.scoring.scorecard import MAX_JUDGE_FAILURE_RATE, Gates, Scorecard, score_gates
from rag_assets.scoring.statements import stated
from rag_assets.settings import current_settings
from rag_assets.store.calibration_repository import SqlCalibrationRepository
from rag_assets.store.rag_repository import RagRun

#: The regression test's significance level when none is given.
DEFAULT_ALPHA = 0.05
#: Makes a progress callback for a named step (e.g. the console's ``terminal_progress``), or None for none.
Progress = Callable[[str], Callable[[int, int], None] | None]


class EvaluationImpossible(RagAssetsError):
    """The evaluation asked for cannot be made: no such RAG run, or no such pinned baseline."""


class RunLabel(Protocol):
    """What the report says of the run that answered: a stored ``RagRun``, or the Python API's stand-in."""

    system_name: str
    system_config_hash: str
    golden_version: int


def judge_answers(items: Sequence[GoldenItem], responses: Mapping[str, RagResponse], chunks: Sequence[SnapshotChunk],
                  judge: LLMClient, cache: LLMCache | None, embedder: Embedder, k: int,
                  documents: Documents | None = None,
                  progress: Callable[[int, int], None] | None = None) -> EvaluationOutcome:
    """Every metric of every item (retrieval at ``k``), with the evidence overlap the settings name; an item the
    system failed on at each metric's worst value (``score_errored``)."""
    return score_answers(items, responses, chunks, judge, cache, embedder, k, progress, documents,
                         current_settings().evidence_min_overlap)


def judge_run_items(store: Store, rag_run_id: str, select: Callable[[list[str]], list[str]], judge: LLMClient,
                    embedder: Embedder, k: int, progress: Callable[[int, int], None] | None = None) -> EvaluationOutcome:
    """Judge a stored RAG run's answers to the golden items ``select`` picks (from the ids of the run's golden
    version, in order: one judge shard), reading only the chunks and documents those items and answers name."""
    rag, corpus = store.rag(), store.corpus()
    run = rag.run(rag_run_id)
    item_ids = select(store.golden().version_item_ids(run.golden_version))
    statements = stated(store.golden().version_items(run.golden_version, item_ids), judge, store.llm_cache())
    items = statements.items
    chunks = corpus.snapshot_chunks(run.corpus_version, rag.chunk_ids(run.run_id, item_ids) | {
        ref.chunk_id for item in items for ref in item.relevant_chunks})
    responses = {r.item_id: r for r in rag.results(run.run_id, {c.chunk_id: c for c in chunks}, item_ids)}
    documents = corpus.documents(run.corpus_version, {c.path for c in chunks} | {
        p.path for response in responses.values() for r in response.retrieved for p in r.places} | {
        p.path for item in items for e in item.evidence for p in e.places})
    return with_statement_calls(
        judge_answers(items, responses, chunks, judge, store.llm_cache(), embedder, k, documents, progress), statements)


@dataclass(frozen=True)
class GoldenScores:
    """A golden set scored without the store: the items (with their reference statements), the system's
    responses, every item's scores, and the system's name and configuration hash."""

    items: list[GoldenItem]
    responses: dict[str, RagResponse]
    outcome: EvaluationOutcome
    system_name: str
    system_config_hash: str


def evaluate_golden(items: Sequence[GoldenItem], chunks: Sequence[SnapshotChunk], documents: Documents | None,
                    corpus_version: str, setup: Callable[[SnapshotChunks], RagSystem], judge: LLMClient,
                    cache: LLMCache | None, embedder: Embedder, k: int,
                    progress: Progress = lambda step: None) -> GoldenScores:
    """The steps of the golden_set, rag_answers and evaluation assets on items nothing stored: each reference
    answer split into statements, the system ``setup`` makes over the snapshot asked every question, every
    answer judged (retrieval at ``k``)."""
    statements = stated(items, judge, cache)
    items = statements.items
    snapshot = SnapshotChunks.of(chunks, documents)
    system = setup(snapshot)
    responses = {r.item_id: r for r in answer_items(system, items, corpus_version, snapshot, progress("rag answers"))}
    outcome = with_statement_calls(
        judge_answers(items, responses, chunks, judge, cache, embedder, k, documents, progress("judging")), statements)
    return GoldenScores(items, responses, outcome, system.name, config_hash(system))


@dataclass(frozen=True)
class Gating:
    """How scores are gated: each metric's minimum, the judge failure budget, and for a regression against a
    baseline the test's alpha and each metric's allowed drop."""

    thresholds: Mapping[str, float]
    max_judge_failure_rate: float = MAX_JUDGE_FAILURE_RATE
    alpha: float = DEFAULT_ALPHA
    allowed_drops: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Baseline:
    """A stored evaluation a new one is compared with: its id, its per-item values and its run's answers.
    ``other_judge``: which judge configuration scored it, when that is not (or not known to be) the one scoring
    now; it is then compared only on the metrics no judge scores (see ``comparable``). ``judge_budget``: the judge
    failure budget it was gated by, so that the report's diff is not decided on the few items an outage left judged
    (none failed when not given)."""

    evaluation_id: str
    values: Mapping[tuple[str, int], Mapping[str, float]]
    answers: Mapping[str, str | None]
    other_judge: str | None = None
    judge_budget: JudgeFailureBudget = JudgeFailureBudget((), MAX_JUDGE_FAILURE_RATE)
    other_rules: str | None = None

    def comparable(self, metrics: Sequence[str]) -> list[str]:
        """The metrics this baseline can be compared on: all, or without the judge's when another judge scored it,
        and without the retrieval figures when they were counted under other rules (``other_rules``: those)."""
        return comparable_metrics(metrics, same=not self.other_judge, counted_alike=not self.other_rules)

    def values_on(self, metrics: Sequence[str]) -> dict[tuple[str, int], dict[str, float]]:
        return restricted(self.values, self.comparable(metrics))

    @property
    def note(self) -> str:
        """Why the judge-scored metrics or the retrieval figures are not compared (the gate's note and the report's
        diff), "" when both are."""
        judge = (f"judge-scored metrics not compared: {self.evaluation_id} was judged by another judge configuration "
                 f"({self.other_judge})") if self.other_judge else ""
        rules = (f"retrieval metrics not compared: {self.evaluation_id} counted them under {self.other_rules}, "
                 f"these under {RETRIEVAL_RULES}") if self.other_rules else ""
        if judge and not rules:
            return f"{judge}; retrieval metrics compared"
        return "; ".join(part for part in (judge, rules) if part)


def restricted(values: Mapping[tuple[str, int], Mapping[str, float]],
               metrics: Sequence[str]) -> dict[tuple[str, int], dict[str, float]]:
    """Per-item values on ``metrics`` only."""
    kept = set(metrics)
    return {key: {m: v for m, v in scored.items() if m in kept} for key, scored in values.items()}


@dataclass(frozen=True)
class Assessment:
    """Scores with their aggregates (the scorecard) and the gates applied to them."""

    outcome: EvaluationOutcome
    scorecard: Scorecard
    gates: Gates


def scorecard(outcome: EvaluationOutcome) -> Scorecard:
    """The aggregates of every evaluated metric, overall and per question type."""
    return Scorecard.build(outcome, REGISTRY.names(k=outcome.k))


def assess(outcome: EvaluationOutcome, gating: Gating, baseline: Baseline | None = None) -> Assessment:
    """The threshold and judge-failure gates, and the regression gate when there is a ``baseline``."""
    card = scorecard(outcome)
    gates = score_gates(card, gating.thresholds, baseline.evaluation_id if baseline else None,
                        baseline.values_on(list(card.overall)) if baseline else None, gating.alpha,
                        gating.allowed_drops, gating.max_judge_failure_rate)
    if baseline is not None and baseline.note:
        gates.notes.append(baseline.note)
    return Assessment(outcome, card, gates)


def render_report(name: str, corpus_version: str, run: RunLabel, assessment: Assessment, items: Sequence[GoldenItem],
                  responses: Mapping[str, RagResponse], history: Sequence = (), against: EvaluationDiff | None = None,
                  calibration: Mapping[str, str] | None = None, probes: Mapping[str, str] | None = None,
                  judged_elsewhere: Collection[str] = ()) -> Report:
    """The HTML report of an assessment (``history``: earlier evaluations of the lineage, plotted, those in
    ``judged_elsewhere``, scored by another judge configuration, without their judge-scored metrics; ``calibration``
    and ``probes``: per metric the judge's agreement with the experts and its probes' pass rates)."""
    return build_report(name, corpus_version, run, assessment.scorecard, assessment.gates, assessment.outcome, items,
                        history, responses, against, calibration, probes, judged_elsewhere)


@dataclass(frozen=True)
class EvaluationRequest:
    """One stored evaluation of a RAG run: the corpus version it belongs to, k, the gating, the judge's
    configuration, a pinned baseline (None: the lineage's previous passing evaluation of the same system), the
    size of the judge review sent to the experts (0: none) and per metric the line on the judge's probes shown in
    the report (the newest probes of the corpus version, which ran after an earlier evaluation)."""

    corpus_version: str
    rag_run_id: str
    k: int
    gating: Gating
    judge: JudgeConfig
    baseline_id: str | None = None
    review_size: int = DEFAULT_SAMPLE_SIZE
    probes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Destinations:
    """Where an evaluation's files go: the report folder, the curation outbox, the report site (None: none)."""

    report_dir: Path
    outbox: Path
    report_url: str | None = None


@dataclass(frozen=True)
class StoredEvaluation:
    """A saved evaluation: its id, the run and golden items it scored, the assessment, the baseline it was
    compared with, the report (and where it was written and published) and the judge review sent."""

    evaluation_id: str
    run: RagRun
    items: list[GoldenItem]
    assessment: Assessment
    baseline_id: str | None
    report: Report
    report_path: Path
    published_url: str | None
    review: ReviewSent

    @property
    def outcome(self) -> EvaluationOutcome:
        return self.assessment.outcome


def _baseline(store: Store, calibrations: SqlCalibrationRepository, request: EvaluationRequest,
              run: RagRun) -> Baseline | None:
    """The pinned or latest passing evaluation. A judge's scores are comparable only with the same judge's: when
    another judge configuration (another model, prompt, embedder, or offline heuristics' version) scored the
    baseline, only the retrieval metrics are compared, so that a change of judge never fails the regression gate
    as a change of the system would."""
    repo = store.evaluations()
    if request.baseline_id:
        record = repo.get(request.baseline_id)
        if record is None:
            raise EvaluationImpossible(f"pinned baseline evaluation {request.baseline_id} does not exist")
    else:
        record = repo.latest_passing(store.corpus().lineage(request.corpus_version), run.system_name)
    if record is None:
        return None
    answers = {r.item_id: r.answer for r in store.rag().results(record.rag_run_id)}
    values = repo.item_values(record.evaluation_id)[0]
    other = calibrations.scored_elsewhere([record.evaluation_id], request.judge.key).get(record.evaluation_id)
    rules = counted_under(record.gates)
    return Baseline(record.evaluation_id, values, answers, other_judge=other,
                    judge_budget=stored_judge_budget(record.gates),
                    other_rules=None if rules == RETRIEVAL_RULES else rules)


def evaluate_run(store: Store, calibrations: SqlCalibrationRepository, shards: Sequence[EvaluationOutcome],
                 request: EvaluationRequest, places: Destinations) -> StoredEvaluation:
    """Merge the judge shards' outcomes of one RAG run, gate them (against the baseline too), save the
    evaluation, send its judge review and write (and publish) its report. When anything after the save fails,
    the evaluation and every file it wrote are removed."""
    run = store.rag().run(request.rag_run_id)
    if run is None:
        raise EvaluationImpossible(f"RAG run {request.rag_run_id} is not in the store")
    items = store.golden().version_items(run.golden_version)
    outcome = EvaluationOutcome.merge(shards, request.k)
    baseline = _baseline(store, calibrations, request, run)
    assessment = assess(outcome, request.gating, baseline)
    card, gates, repo = assessment.scorecard, assessment.gates, store.evaluations()
    evaluation_id = repo.save(
        corpus_version=request.corpus_version, golden_version=run.golden_version, rag_run_id=run.run_id,
        system_name=run.system_name, system_config_hash=run.system_config_hash, judge=provider_label(outcome.stats),
        k=request.k, aggregates=card.as_dict(), gates={**gates.as_dict(), RULES_KEY: RETRIEVAL_RULES},
        passed=gates.passed,
        baseline_id=baseline.evaluation_id if baseline else None, items=outcome.items)
    written: list[Path] = []
    with repo.discarded_on_failure(evaluation_id, written):
        chunks = {c.chunk_id: c for c in store.corpus().snapshot_chunks(run.corpus_version,
                                                                        store.rag().chunk_ids(run.run_id))}
        responses = {r.item_id: r for r in store.rag().results(run.run_id, chunks)}
        against = None
        if baseline is not None:
            current, types = card.values()
            answers = {i: r.answer for i, r in responses.items()}
            against = diff_evaluations(baseline.evaluation_id, evaluation_id, baseline.values, current, types,
                                       baseline.answers, answers, request.gating.thresholds,
                                       baseline.comparable(REGISTRY.names(k=request.k)), baseline.note,
                                       unjudged={baseline.evaluation_id: baseline.judge_budget,
                                                 evaluation_id: gates.judge_budget})
        review = send_judge_review(calibrations, places.outbox, evaluation_id, request.judge, outcome.items, items,
                                   responses, request.review_size)
        written.extend(review.files or ())
        history = repo.history(store.corpus().lineage(request.corpus_version))
        elsewhere = set(calibrations.scored_elsewhere([h.evaluation_id for h in history], request.judge.key))
        report = render_report(evaluation_id, request.corpus_version, run, assessment, items, responses, history,
                               against, review.calibration, request.probes, elsewhere)
        path = places.report_dir / f"{evaluation_id}.html"
        written.append(path)
        report.write(path)
        repo.set_report_path(evaluation_id, str(path))
        published = publish_report(path, places.report_url) if places.report_url else None
    return StoredEvaluation(evaluation_id, run, items, assessment, baseline.evaluation_id if baseline else None,
                            report, path, published, review)
