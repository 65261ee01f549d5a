"""The compare use case without Dagster: stored evaluations of three items in SQLite, held to recall@5 >= 0.5 and
faithfulness >= 0.8, each scored by the judge configuration its judge-review sample records (or by none recorded).

A: q-1 recall 1.0 / faithfulness 0.9 (pass), q-2 0.0 / 0.9 (fail), q-3 1.0 / 0.9 (pass).
B: q-1 1.0 / 0.3 (fail), q-2 1.0 / 0.9 (pass), q-3 1.0 / 0.9 (pass); q-2's answer changes.
Scored by one judge, q-1 flips to fail on faithfulness (-0.600) and q-2 to pass on recall (+1.000). Scored by two
judges, faithfulness is not compared: only q-2 moves and flips, and the note says why.
"""

from __future__ import annotations

import pytest

from rag_assets.app.comparison import NoEvaluation, compare_evaluations
from rag_assets.app.store import Store
from rag_assets.calibration.models import JudgeConfig
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.item_scores import ItemScores
from rag_assets.store.calibration_repository import SqlCalibrationRepository
from rag_assets.store.engine import get_engine
from tests.app.conftest import SqliteStore

GATES = {"thresholds": [{"metric": "recall@5", "minimum": 0.5}, {"metric": "faithfulness", "minimum": 0.8}]}
A = ((1.0, 0.9), (0.0, 0.9), (1.0, 0.9))  # per item (recall@5, faithfulness)
B = ((1.0, 0.3), (1.0, 0.9), (1.0, 0.9))
ANSWERS_A = ("50 per minute.", "No idea.", "Keys last a year.")
ANSWERS_B = ("50 per minute.", "Rotate it in the console.", "Keys last a year.")
JUDGE = JudgeConfig("offline", "offline-heuristics-v2", "judge_faithfulness@3", "hashing")
OTHER_JUDGE = JudgeConfig("offline", "offline-heuristics-v1", "judge_faithfulness@3", "hashing")


@pytest.fixture
def calibrations(store: SqliteStore) -> SqlCalibrationRepository:
    return SqlCalibrationRepository(get_engine(store.url))


def stored_evaluation(store: Store, calibrations: SqlCalibrationRepository,
                      scores: tuple[tuple[float, float], ...], answers: tuple[str, ...],
                      judge: JudgeConfig | None, gates: dict = GATES) -> str:
    """An evaluation saved with its items' scores and run's answers; ``judge``: the configuration its (empty)
    judge-review sample records, None for one saved before judge configurations were recorded; ``gates``: as stored
    (without ``retrieval_rules``: saved before retrieval rules were recorded)."""
    responses = [RagResponse(f"q-{n}", answer) for n, answer in enumerate(answers, 1)]
    run = store.rag().save_run("cv-1", 1, "sys", "h", {}, responses, {r.item_id: 1 for r in responses})
    items = [ItemScores(f"q-{n}", 1, "factual", {"recall@5": recall, "faithfulness": faithfulness})
             for n, (recall, faithfulness) in enumerate(scores, 1)]
    evaluation_id = store.evaluations().save(
        corpus_version="cv-1", golden_version=1, rag_run_id=run.run_id, system_name="sys", system_config_hash="h",
        judge="offline", k=5, aggregates={}, gates=gates, passed=False, baseline_id=None, items=items)
    if judge is not None:
        calibrations.record_sample(evaluation_id, judge, [], None)
    return evaluation_id


def _flips(compared) -> list[tuple[str, bool, bool]]:
    return [(i.item_id, i.passed_a, i.passed_b) for i in compared.diff.flips]


def test_evaluations_by_one_judge_are_compared_on_every_metric(store: SqliteStore,
                                                               calibrations: SqlCalibrationRepository):
    a = stored_evaluation(store, calibrations, A, ANSWERS_A, JUDGE)
    b = stored_evaluation(store, calibrations, B, ANSWERS_B, JUDGE)

    compared = compare_evaluations(store, calibrations, a, b)

    diff = compared.diff
    assert diff.metrics == ("faithfulness", "recall@5") and diff.note == ""
    assert _flips(compared) == [("q-1", True, False), ("q-2", False, True)]
    assert [(i.item_id, dict(i.values)) for i in diff.changed] == [
        ("q-2", {"faithfulness": (0.9, 0.9), "recall@5": (0.0, 1.0)}),
        ("q-1", {"faithfulness": (0.9, 0.3), "recall@5": (1.0, 1.0)})]
    assert {c.metric for c in diff.comparison.comparisons} == {"faithfulness", "recall@5"}
    assert compared.markdown.startswith(f"# {a} (A) → {b} (B)\n\n3 items, 2 changed, 2 flipped pass/fail.\n\n## ")
    assert "| q-2 | +0.000 | +1.000 | No idea. | Rotate it in the console. |" in compared.markdown
    assert "| q-1 | -0.600 | +0.000 | 50 per minute. | 50 per minute. |" in compared.markdown
    assert "Note" not in compared.markdown


def test_evaluations_whose_retrieval_was_counted_under_other_rules_are_compared_on_the_judges_metrics(
        store: SqliteStore, calibrations: SqlCalibrationRepository):
    """The rules that count retrieval changed between A and B: q-2's recall moved with them, so it must not flip."""
    a = stored_evaluation(store, calibrations, A, ANSWERS_A, JUDGE)
    b = stored_evaluation(store, calibrations, B, ANSWERS_B, JUDGE, {**GATES, "retrieval_rules": "retrieval-2"})

    diff = compare_evaluations(store, calibrations, a, b).diff

    assert diff.metrics == ("faithfulness",) and diff.note == (
        f"retrieval metrics not compared: {a} counted them under retrieval-1, {b} under retrieval-2")
    assert [(i.item_id, i.passed_a, i.passed_b) for i in diff.flips] == [("q-1", True, False)]


def test_evaluations_by_two_judges_are_compared_on_the_metrics_no_judge_scores(
        store: SqliteStore, calibrations: SqlCalibrationRepository):
    """The judge changed, not the system: q-1's faithfulness fell with the judge, so it must not flip."""
    a = stored_evaluation(store, calibrations, A, ANSWERS_A, OTHER_JUDGE)
    b = stored_evaluation(store, calibrations, B, ANSWERS_B, JUDGE)

    compared = compare_evaluations(store, calibrations, a, b)

    diff = compared.diff
    note = (f"judge-scored metrics not compared: {a} was scored by judge configuration {OTHER_JUDGE.label()}, {b} "
            f"by another one, {JUDGE.label()}; one judge's scores are not comparable with another's; only the "
            "metrics no judge scores are compared")
    assert diff.metrics == ("recall@5",) and diff.note == note
    assert _flips(compared) == [("q-2", False, True)]
    assert [(i.item_id, i.passed_a, i.passed_b, dict(i.values)) for i in diff.items] == [
        ("q-1", True, True, {"recall@5": (1.0, 1.0)}), ("q-2", False, True, {"recall@5": (0.0, 1.0)}),
        ("q-3", True, True, {"recall@5": (1.0, 1.0)})]
    assert [i.item_id for i in diff.changed] == ["q-2"]
    assert {c.metric for c in diff.comparison.comparisons} == {"recall@5"}
    assert compared.markdown.startswith(f"# {a} (A) → {b} (B)\n\n3 items, 1 changed, 1 flipped pass/fail.\n\n"
                                        f"**Note:** {note}\n\n## ")
    assert "| q-2 | +1.000 | No idea. | Rotate it in the console. |" in compared.markdown
    assert "faithfulness" not in compared.markdown.split(note)[1]


def test_an_evaluation_whose_judge_was_never_recorded_is_compared_on_the_metrics_no_judge_scores(
        store: SqliteStore, calibrations: SqlCalibrationRepository):
    a = stored_evaluation(store, calibrations, A, ANSWERS_A, JUDGE)
    b = stored_evaluation(store, calibrations, B, ANSWERS_B, None)
    before = stored_evaluation(store, calibrations, A, ANSWERS_A, None)

    compared = compare_evaluations(store, calibrations, a, b)

    assert compared.diff.metrics == ("recall@5",) and _flips(compared) == [("q-2", False, True)]
    assert compared.diff.note == (
        f"judge-scored metrics not compared: the judge configuration of {b} was never recorded (saved before judge "
        "configurations were); one judge's scores are not comparable with another's; only the metrics no "
        "judge scores are compared")
    both = compare_evaluations(store, calibrations, before, b).diff
    assert both.metrics == ("recall@5",)
    assert f"the judge configuration of {before} and {b} was never recorded" in both.note


def test_a_missing_evaluation_is_named(store: SqliteStore, calibrations: SqlCalibrationRepository):
    a = stored_evaluation(store, calibrations, A, ANSWERS_A, JUDGE)
    with pytest.raises(NoEvaluation) as told:
        compare_evaluations(store, calibrations, a, "ev-gone")
    assert str(told.value) == "no evaluation 'ev-gone'"
    with pytest.raises(NoEvaluation, match=r"^no evaluation 'ev-x', 'ev-y'$"):
        compare_evaluations(store, calibrations, "ev-x", "ev-y")
