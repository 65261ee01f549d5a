"""The evaluation use case without Dagster, on a hand-made golden set of three items over three chunks.

The system retrieves the rate-limit chunk c1, then the billing chunk c3, for every question, and always answers
with the rate limit. With k = 2 (relevant chunk of q-1: c1, of q-2: c2, of q-3: c3):
    q-1: recall@2 = 1/1, precision@2 = 1/2, mrr@2 = 1/1 (c1 at rank 1), hit_rate@2 = 1
    q-2: recall@2 = 0/1, precision@2 = 0/2, mrr@2 = 0,                 hit_rate@2 = 0
    q-3: recall@2 = 1/1, precision@2 = 1/2, mrr@2 = 1/2 (c3 at rank 2), hit_rate@2 = 1
    means: recall@2 2/3, precision@2 1/3, mrr@2 1/2, hit_rate@2 2/3
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from sqlalchemy import text

from rag_assets.app.evaluation import (Baseline, Destinations, EvaluationImpossible, EvaluationRequest, Gating,
                                       GoldenScores, StoredEvaluation, assess, evaluate_golden, evaluate_run,
                                       render_report)
from rag_assets.calibration.models import JudgeConfig
from rag_assets.corpus.models import ChunkRef, SnapshotChunk
from rag_assets.golden.models import GoldenItem
from rag_assets.llm.offline import OfflineClient
from rag_assets.rag.models import RagQuery, RagResponse, RetrievedChunk
from rag_assets.scoring.evaluate import EvaluationOutcome
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.embedding import make_embedder
from rag_assets.store.calibration_repository import SqlCalibrationRepository
from rag_assets.store.engine import get_engine
from rag_assets.store.evaluation_repository import SqlEvaluationRepository
from rag_assets.store.rag_repository import RagRun, SqlRagRepository

LIMITS = "Rate limits: the API allows 50 requests per minute per key."
ROTATE = "To rotate a key, create a new key and delete the old one."
BILLING = "Invoices are sent on the first day of each month."
CHUNKS = [SnapshotChunk(f"c{n}", f"h{n}", f"{name}.md", name.title(), "1", None, "", text, 0, len(text))
          for n, (name, text) in enumerate((("limits", LIMITS), ("keys", ROTATE), ("billing", BILLING)), 1)]
ITEMS = [GoldenItem("q-1", 1, "factual", "What is the rate limit?", "50 requests per minute per key.",
                    (ChunkRef("c1", "h1"),), "cv-1"),
         GoldenItem("q-2", 1, "factual", "How do I rotate a key?", "Create a new key, then delete the old one.",
                    (ChunkRef("c2", "h2"),), "cv-1"),
         GoldenItem("q-3", 1, "factual", "When are invoices sent?", "On the first day of each month.",
                    (ChunkRef("c3", "h3"),), "cv-1")]
ANSWER = "The API allows 50 requests per minute per key."
RETRIEVAL = {"recall@2": (1.0, 0.0, 1.0), "precision@2": (0.5, 0.0, 0.5), "mrr@2": (1.0, 0.0, 0.5),
             "hit_rate@2": (1.0, 0.0, 1.0)}
OFFLINE = JudgeConfig("offline", "offline-heuristics-v1", "judge_faithfulness@3", "hashing")


class FixedSystem:
    """c1 then c3 for every question, and the rate limit as the answer."""

    name = "fixed"

    def config(self) -> dict[str, Any]:
        return {"answer": ANSWER}

    def answer(self, queries: Sequence[RagQuery], progress: Callable[[int, int], None] | None = None) -> list[RagResponse]:
        retrieved = (RetrievedChunk("c1", LIMITS, 0.9, 1), RetrievedChunk("c3", BILLING, 0.4, 2))
        return [RagResponse(q.item_id, ANSWER, retrieved) for q in queries]


def _scored() -> GoldenScores:
    return evaluate_golden(ITEMS, CHUNKS, None, "cv-1", lambda snapshot: FixedSystem(), OfflineClient(), None,
                           make_embedder("hashing"), 2)


def test_evaluate_golden_states_the_references_answers_every_item_and_scores_it():
    scores = _scored()
    assert [i.item_id for i in scores.items] == ["q-1", "q-2", "q-3"] and all(i.reference_statements
                                                                              for i in scores.items)
    assert sorted(scores.responses) == ["q-1", "q-2", "q-3"] and scores.responses["q-2"].answer == ANSWER
    assert scores.system_name == "fixed" and len(scores.system_config_hash) == 16
    values = {s.item_id: s.values for s in scores.outcome.items}
    assert {m: tuple(values[i][m] for i in ("q-1", "q-2", "q-3")) for m in RETRIEVAL} == RETRIEVAL
    # the answer is c1's sentence, retrieved for every item: grounded everywhere. q-1's reference is in c1, q-3's
    # in c3, q-2's (the key rotation) in neither of the retrieved c1 and c3
    assert [values[i]["faithfulness"] for i in ("q-1", "q-2", "q-3")] == [1.0, 1.0, 1.0]
    assert [values[i]["context_recall"] for i in ("q-1", "q-2", "q-3")] == [1.0, 0.0, 1.0]


def test_assess_gates_the_means_against_the_minimums_and_the_judge_failure_budget():
    outcome = _scored().outcome
    assessment = assess(outcome, Gating({"recall@2": 0.6, "precision@2": 0.34}))
    overall = assessment.scorecard.overall
    assert {m: overall[m].mean for m in RETRIEVAL} == pytest.approx({"recall@2": 2 / 3, "precision@2": 1 / 3,
                                                                     "mrr@2": 0.5, "hit_rate@2": 2 / 3})
    gates = assessment.gates
    assert [(t.metric, t.passed) for t in gates.thresholds] == [("recall@2", True), ("precision@2", False)]
    assert gates.thresholds_text() == "below minimum: precision@2 0.333 < 0.34"
    assert gates.failure_budget_passed and gates.regression_passed and gates.baseline_id is None
    assert not gates.passed and assess(outcome, Gating({"recall@2": 0.6, "precision@2": 0.33})).gates.passed


def test_a_baseline_is_compared_item_by_item_and_a_drop_not_significant_on_three_items_passes():
    outcome = _scored().outcome
    before = {(f"q-{n}", 1): {"recall@2": 1.0} for n in (1, 2, 3)}
    gates = assess(outcome, Gating({}), Baseline("ev-before", before, {})).gates
    (recall,) = [r for r in gates.regressions if r.metric == "recall@2" and r.scope == "overall"]
    # before 1, 1, 1; after 1, 0, 1: the mean drops by 1/3, on one item of three: no significant drop
    assert (recall.n, recall.baseline_mean, recall.drop, recall.failed) == (3, 1.0, pytest.approx(1 / 3), False)
    assert recall.worse_items == (("q-2", 1.0, 0.0),)
    assert gates.baseline_id == "ev-before" and gates.regression_passed


def test_the_report_shows_every_item_the_run_and_the_gates():
    scores = _scored()
    run = RagRun("run-1", "cv-1", 3, scores.system_name, scores.system_config_hash, {}, 3, 0)
    page = render_report("ev-test", "cv-1", run, assess(scores.outcome, Gating({"precision@2": 0.34})), scores.items,
                         scores.responses).data
    assert (page.title, page.golden_version, page.rag_system) == ("Evaluation ev-test", 3,
                                                                  f"fixed ({scores.system_config_hash})")
    assert sorted(i.item_id for i in page.items) == ["q-1", "q-2", "q-3"]
    assert page.gates[0] == {"gate": "thresholds", "status": "failed",
                             "detail": "below minimum: precision@2 0.333 < 0.34"}


class _Golden:
    def __init__(self, items: list[GoldenItem]) -> None:
        self.items = items

    def version_items(self, number: int, item_ids: Sequence[str] | None = None) -> list[GoldenItem]:
        return list(self.items)


class _Corpus:
    def lineage(self, version: str) -> list[str]:
        return [version]

    def snapshot_chunks(self, version: str, chunk_ids: Collection[str] | None = None) -> list[SnapshotChunk]:
        return [c for c in CHUNKS if chunk_ids is None or c.chunk_id in chunk_ids]


class _Store:
    """The store the use case reads: RAG runs and evaluations in SQLite, the golden items and chunks in memory."""

    def __init__(self, url: str, items: list[GoldenItem]) -> None:
        self.engine = get_engine(url)
        self.items = items

    def rag(self) -> SqlRagRepository:
        return SqlRagRepository(self.engine)

    def evaluations(self) -> SqlEvaluationRepository:
        return SqlEvaluationRepository(self.engine)

    def golden(self) -> _Golden:
        return _Golden(self.items)

    def corpus(self) -> _Corpus:
        return _Corpus()


def test_evaluate_run_saves_gates_reviews_and_reports_then_compares_the_next_with_it(tmp_path: Path):
    scores = _scored()
    store = _Store(f"sqlite:///{tmp_path / 'store.db'}", scores.items)
    run = store.rag().save_run("cv-1", 1, scores.system_name, scores.system_config_hash, {},
                               list(scores.responses.values()), {i.item_id: i.revision for i in scores.items})
    places = Destinations(tmp_path / "reports", tmp_path / "outbox")
    request = EvaluationRequest("cv-1", run.run_id, 2, Gating({"recall@2": 0.6}), OFFLINE, review_size=30)
    calibrations = SqlCalibrationRepository(store.engine)

    first = evaluate_run(store, calibrations, [scores.outcome], request, places)

    record = store.evaluations().get(first.evaluation_id)
    assert record.passed and record.baseline_id is None and first.baseline_id is None
    assert record.aggregates["overall"]["recall@2"]["mean"] == pytest.approx(2 / 3)
    assert record.report_path == str(first.report_path) == str(tmp_path / "reports" / f"{first.evaluation_id}.html")
    assert first.report_path.is_file() and first.published_url is None
    assert [i.item_id for i in first.review.sample] == ["q-1", "q-2", "q-3"]
    assert [p.name for p in first.review.files] == [f"judge-review-{first.evaluation_id}.xlsx",
                                                    f"judge-review-{first.evaluation_id}.csv"]
    assert set(first.review.calibration.values()) == {"judge not calibrated with your experts"}

    second = evaluate_run(store, calibrations, [scores.outcome], request, places)
    assert second.baseline_id == first.evaluation_id == second.assessment.gates.baseline_id
    assert all(r.drop == 0.0 and not r.failed for r in second.assessment.gates.regressions)
    diff = second.report.data.baseline
    assert (diff.a_id, diff.b_id, diff.flips) == (first.evaluation_id, second.evaluation_id, [])

    with pytest.raises(EvaluationImpossible, match="^pinned baseline evaluation ev-missing does not exist$"):
        evaluate_run(store, calibrations, [scores.outcome],
                     EvaluationRequest("cv-1", run.run_id, 2, Gating({}), OFFLINE, baseline_id="ev-missing"), places)
    assert len(store.evaluations().history(["cv-1"])) == 2


OTHER_JUDGE = JudgeConfig("offline", "offline-heuristics-v0", "judge_faithfulness@3", "hashing")


def _judged_by(tmp_path: Path) -> tuple[_Store, Callable[..., StoredEvaluation]]:
    """A store holding the fixed system's RAG run, and a function evaluating that run again (no gate) with a
    judge configuration, its samples recorded in ``calibrations`` (the store's when none is given), from ``outcome``
    (the fixed system's scores when none is given) and against the pinned ``baseline_id`` (None: the latest passing)."""
    scores = _scored()
    store = _Store(f"sqlite:///{tmp_path / 'store.db'}", scores.items)
    run = store.rag().save_run("cv-1", 1, scores.system_name, scores.system_config_hash, {},
                               list(scores.responses.values()), {i.item_id: i.revision for i in scores.items})
    places = Destinations(tmp_path / "reports", tmp_path / "outbox")

    def evaluated(judge: JudgeConfig, calibrations: SqlCalibrationRepository | None = None,
                  outcome: EvaluationOutcome | None = None, baseline_id: str | None = None) -> StoredEvaluation:
        return evaluate_run(store, calibrations or SqlCalibrationRepository(store.engine), [outcome or scores.outcome],
                            EvaluationRequest("cv-1", run.run_id, 2, Gating({}), judge, baseline_id), places)

    return store, evaluated


def _stored_before_the_retrieval_rules(store: _Store, evaluation_id: str) -> None:
    """The evaluation as one stored before its retrieval rules were recorded (counted under the first ones)."""
    gates = store.evaluations().get(evaluation_id).gates
    assert gates.pop("retrieval_rules") == "retrieval-2"
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE evaluation SET gates_json = :gates WHERE evaluation_id = :id"),
                     {"gates": json.dumps(gates), "id": evaluation_id})


def test_a_baseline_counted_under_other_retrieval_rules_is_not_compared_on_retrieval(tmp_path: Path):
    """The rules that count retrieval changed (a context inside longer evidence no longer finds it), not the system:
    a baseline stored before holds figures counted otherwise, so the gate and the report's diff leave the retrieval
    metrics out, compare the judge's, and say why; an evaluation made after is compared on everything again."""
    store, evaluated = _judged_by(tmp_path)
    before = evaluated(OFFLINE)
    _stored_before_the_retrieval_rules(store, before.evaluation_id)

    upgraded = evaluated(OFFLINE)
    gates = upgraded.assessment.gates
    compared = {r.metric for r in gates.regressions}
    assert upgraded.baseline_id == before.evaluation_id
    assert "faithfulness" in compared and not compared & set(REGISTRY.names("retrieval", k=2))
    assert gates.notes[-1] == (f"retrieval metrics not compared: {before.evaluation_id} counted them under "
                               "retrieval-1, these under retrieval-2") == upgraded.report.data.baseline.note
    assert "recall@2" not in upgraded.report.data.baseline.metrics
    assert {r.metric for r in evaluated(OFFLINE).assessment.gates.regressions} >= {"faithfulness", "recall@2"}


def test_a_baseline_scored_by_another_judge_is_compared_on_retrieval_metrics_only(tmp_path: Path):
    """The judge changed (here its model), not the system: its scores are not comparable with the new judge's,
    so the regression gate compares the retrieval metrics, which no judge reads, and says why."""
    store, evaluated = _judged_by(tmp_path)
    first, same = evaluated(OFFLINE), evaluated(OFFLINE)
    assert {r.metric for r in same.assessment.gates.regressions} >= {"faithfulness", "recall@2"}

    changed = evaluated(OTHER_JUDGE)
    gates = changed.assessment.gates
    assert changed.baseline_id == same.evaluation_id != first.evaluation_id
    compared = {r.metric for r in gates.regressions}
    assert "recall@2" in compared and compared <= set(REGISTRY.names("retrieval", k=2)) and "faithfulness" not in compared
    assert gates.regression_text().endswith(
        f"judge-scored metrics not compared: {same.evaluation_id} was judged by another judge configuration "
        f"({OFFLINE.key}); retrieval metrics compared")
    assert changed.report.data.baseline.flips == [], "no pass/fail flip from metrics left out"
    assert changed.report.data.baseline.note == gates.notes[-1] and same.report.data.baseline.note == ""
    assert store.evaluations().get(changed.evaluation_id).gates["notes"] == gates.notes != []

    unknown = evaluated(OFFLINE, SqlCalibrationRepository(get_engine(f"sqlite:///{tmp_path / 'other.db'}")))
    assert "faithfulness" not in {r.metric for r in unknown.assessment.gates.regressions}, \
        "a baseline whose judge was never recorded is not assumed to be this judge's"


def _unjudged(outcome: EvaluationOutcome, metric: str, item_ids: Collection[str]) -> EvaluationOutcome:
    """``outcome`` as a judge outage leaves it: the judge's calls for ``metric`` failed on ``item_ids``."""
    items = [replace(i, values={m: v for m, v in i.values.items() if m != metric},
                     failures={**i.failures, metric: "overloaded_error: Overloaded"}) if i.item_id in item_ids else i
             for i in outcome.items]
    return replace(outcome, items=items, judge_failures=outcome.judge_failures + len(item_ids))


def test_the_reports_diff_against_a_side_whose_judge_failed_beyond_its_budget_cannot_be_decided(tmp_path: Path):
    """An outage left faithfulness judged on one item of three: as in ``rag-assets compare``, the report's diff
    against the baseline is not decided on what the judge happened to score (REVIEW, whichever side the outage
    hit), while the same values judged in full are."""
    _, evaluated = _judged_by(tmp_path)
    first = evaluated(OFFLINE)
    again = evaluated(OFFLINE)
    outage = evaluated(OFFLINE, outcome=_unjudged(first.outcome, "faithfulness", {"q-1", "q-2"}))
    pinned = evaluated(OFFLINE, baseline_id=outage.evaluation_id)

    decided = again.report.data.baseline.comparison
    assert (again.baseline_id, decided.recommendation, decided.undecided) == (first.evaluation_id, "APPROVE", False)
    assert outage.baseline_id == again.evaluation_id and not outage.assessment.gates.failure_budget_passed
    why = "faithfulness: 2 of 3 items (66.7%) not judged; budget 5%"
    for current in (outage, pinned):
        comparison = current.report.data.baseline.comparison
        assert (comparison.recommendation, comparison.undecided) == ("REVIEW", True)
        assert comparison.reasons == (f"cannot be decided: {outage.evaluation_id} {why}",)


LEFT_OUT = ("scored by another judge configuration, or by one never recorded, left out of the judge-scored "
            "metrics' trend: one judge's scores are not comparable with another's.")


def test_the_trend_draws_the_judge_scored_metrics_of_evaluations_by_this_judge_only(tmp_path: Path):
    """Every trend metric is a judge's (``Registry.reviewed``): an evaluation by another judge configuration, or
    by one never recorded, is left out of it and counted in the trend's note."""
    store, evaluated = _judged_by(tmp_path)
    first, changed, again = evaluated(OFFLINE), evaluated(OTHER_JUDGE), evaluated(OFFLINE)

    def trend(evaluation) -> list[tuple[str, float, float]]:
        return [(row["label"], row["faithfulness"], row["context_recall"]) for row in evaluation.report.data.history]

    assert trend(first) == [(first.evaluation_id[-6:], 1.0, pytest.approx(2 / 3))]
    assert first.report.data.history_note == ""
    assert trend(changed) == [(changed.evaluation_id[-6:], 1.0, pytest.approx(2 / 3))]
    assert changed.report.data.history_note == f"1 earlier evaluation {LEFT_OUT}"
    assert trend(again) == [(first.evaluation_id[-6:], 1.0, pytest.approx(2 / 3)),
                            (again.evaluation_id[-6:], 1.0, pytest.approx(2 / 3))]
    assert again.report.data.history_note == f"1 earlier evaluation {LEFT_OUT}"
    page = again.report_path.read_text(encoding="utf-8")
    section = page[page.index('<section id="trend">'):page.index("</section>", page.index('<section id="trend">'))]
    assert (f"2 evaluations, oldest first, from {store.evaluations().get(first.evaluation_id).created_at} to "
            f"{store.evaluations().get(again.evaluation_id).created_at}. Gaps are missing values. "
            f"{escape(f'1 earlier evaluation {LEFT_OUT}')}") in section

    unrecorded = evaluated(OFFLINE, SqlCalibrationRepository(get_engine(f"sqlite:///{tmp_path / 'other.db'}")))
    assert trend(unrecorded) == [(unrecorded.evaluation_id[-6:], 1.0, pytest.approx(2 / 3))]
    assert unrecorded.report.data.history_note == f"3 earlier evaluations {LEFT_OUT}"


def test_a_failure_after_the_save_leaves_no_evaluation_and_no_file(tmp_path: Path):
    scores = _scored()
    store = _Store(f"sqlite:///{tmp_path / 'store.db'}", scores.items)
    run = store.rag().save_run("cv-1", 1, scores.system_name, scores.system_config_hash, {},
                               list(scores.responses.values()), {i.item_id: i.revision for i in scores.items})
    (tmp_path / "reports").write_text("a file where the report folder should be", encoding="utf-8")
    with pytest.raises(OSError):
        evaluate_run(store, SqlCalibrationRepository(store.engine), [scores.outcome],
                     EvaluationRequest("cv-1", run.run_id, 2, Gating({}), OFFLINE),
                     Destinations(tmp_path / "reports", tmp_path / "outbox"))
    assert store.evaluations().history(["cv-1"]) == [] and list((tmp_path / "outbox").iterdir()) == []


def test_the_reference_statements_are_the_scoring_judges_not_those_stored_with_the_golden_set():
    """A tester's home: a golden set built with the offline judge, then evaluated with Claude; the stored path's
    context recall read the offline judge's statements while rag_assets.evaluate asked Claude for them."""
    stale = [replace(item, reference_statements=("Statements another judge made.",)) for item in ITEMS]
    judged = evaluate_golden(stale, CHUNKS, None, "cv-1", lambda snapshot: FixedSystem(), OfflineClient(), None,
                             make_embedder("hashing"), 2)
    assert [i.reference_statements for i in judged.items] == [("50 requests per minute per key.",),
                                                              ("Create a new key, then delete the old one.",),
                                                              ("On the first day of each month.",)]
    assert [s.values["context_recall"] for s in judged.outcome.items] == [
        s.values["context_recall"] for s in _scored().outcome.items]
