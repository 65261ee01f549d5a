"""The compare use case without Dagster: two stored evaluations of two items in SQLite, held to recall@5 >= 0.5.

A: q-1 recall@5 = 1.0 (pass), q-2 = 0.0 (fail); B: both 1.0 (pass). So q-2 flips from fail to pass with a delta
of +1.000, its answer changes from "No idea." to "Rotate it in the console.", and q-1 is unchanged.
"""

from __future__ import annotations


import pytest

from rag_assets.app.comparison import NoEvaluation, compare_evaluations
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.item_scores import ItemScores
from tests.app.conftest import SqliteStore

GATES = {"thresholds": [{"metric": "recall@5", "minimum": 0.5}]}


def _evaluation(store: SqliteStore, recall: tuple[float, float], answers: tuple[str, str]) -> str:
    responses = [RagResponse(f"q-{n}", answer) for n, answer in enumerate(answers, 1)]
    run = store.rag().save_run("cv-1", 1, "sys", "h", {}, responses, {"q-1": 1, "q-2": 1})
    items = [ItemScores(f"q-{n}", 1, "factual", {"recall@5": value}) for n, value in enumerate(recall, 1)]
    return store.evaluations().save(corpus_version="cv-1", golden_version=1, rag_run_id=run.run_id, system_name="sys",
                                    system_config_hash="h", judge="offline", k=5, aggregates={}, gates=GATES,
                                    passed=False, baseline_id=None, items=items)


def test_the_item_that_flipped_is_named_with_its_delta_and_answers(store: SqliteStore):
    a = _evaluation(store, (1.0, 0.0), ("50 per minute.", "No idea."))
    b = _evaluation(store, (1.0, 1.0), ("50 per minute.", "Rotate it in the console."))

    compared = compare_evaluations(store, a, b)

    assert [(i.item_id, i.passed_a, i.passed_b) for i in compared.diff.flips] == [("q-2", False, True)]
    assert [(i.item_id, i.delta("recall@5")) for i in compared.diff.changed] == [("q-2", 1.0)]
    assert compared.diff.metrics == ("recall@5",)
    assert compared.markdown.startswith(f"# {a} (A) → {b} (B)\n\n2 items, 1 changed, 1 flipped pass/fail.\n")
    assert "| q-2 | +1.000 | No idea. | Rotate it in the console. |" in compared.markdown


def test_a_missing_evaluation_is_named(store: SqliteStore):
    a = _evaluation(store, (1.0, 0.0), ("50 per minute.", "No idea."))
    with pytest.raises(NoEvaluation) as told:
        compare_evaluations(store, a, "ev-gone")
    assert str(told.value) == "no evaluation ev-gone"
    with pytest.raises(NoEvaluation, match=r"^no evaluation ev-x, ev-y$"):
        compare_evaluations(store, "ev-x", "ev-y")
