"""``rag_assets.judge``: the evaluation asset's per-item numbers for the same item, from Python."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from rag_assets import judge
from rag_assets.defs.resources import RESOURCES
from rag_assets.errors import ConfigError
from rag_assets.llm.offline import OfflineClient
from rag_assets.scoring.single import NO_STATEMENTS
from tests.defs.lifecycle import current_version, metadata, run_job, stage_sample_review

CORE = ("faithfulness", "answer_relevance", "context_precision", "context_recall")


def test_judge_gives_the_evaluation_assets_per_item_values_for_the_same_items(project_env: Path):
    version = current_version()
    stage_sample_review(version)
    with dg.instance_for_test() as instance:
        meta = metadata(run_job(instance, "lifecycle", version), "evaluation")
    store = RESOURCES["store"]
    values, _ = store.evaluations().item_values(meta["evaluation_id"])
    run = store.rag().run(meta["rag_run"])
    chunks = store.corpus().snapshot_chunks(run.corpus_version)
    version_of = {c.chunk_id: c.doc_version for c in chunks}
    responses = {r.item_id: r for r in store.rag().results(run.run_id, {c.chunk_id: c for c in chunks})}
    compared = 0
    for item in store.golden().version_items(run.golden_version):
        response = responses[item.item_id]
        if item.question_type == "adversarial" or not response.ok:
            continue
        contexts = [{"chunk_id": r.chunk_id, "text": r.text, "version": version_of[r.chunk_id]}
                    for r in response.retrieved]
        scores = judge(item.question, response.answer, contexts, reference=item.reference_answer)
        assert scores["failures"] == {} and scores["judge"] == "offline:offline-heuristics-v4"
        assert {m: scores[m] for m in CORE} == {m: values[(item.item_id, item.revision)][m] for m in CORE}, item.item_id
        compared += 1
    assert compared >= 10


CHUNKS = ["Files can be at most 15 GB in Kestrel 2.0.", "Bandwidth schedules apply different caps at night."]


# The offline judge is lexical (rag_assets/scoring/offline_judge): over the chunks' two sentences every stem
# weighs ln(3 / 1.5), held by one sentence or, like "maximum" and "size", by none (weighed as if once).
STATED = 3 / 5  # file, 15, gb of maximum, file, size, 15, gb
ASKED = 1 / 3  # file of maximum, file, size


def test_without_a_reference_there_is_no_context_recall_and_precision_is_reference_free():
    scores = judge("What is the maximum file size?", "The maximum file size is 15 GB [1].", CHUNKS)
    assert set(scores) == {"faithfulness", "answer_relevance", "context_precision", "failures", "judge"}
    assert scores["faithfulness"] == pytest.approx(STATED, abs=1e-6), "one claim, grounded at its support 0.6"
    assert scores["context_precision"] == pytest.approx((ASKED + STATED) / 2, abs=1e-6) and scores["failures"] == {}
    off = judge("What is the maximum file size?", "The maximum file size is 15 GB.", list(reversed(CHUNKS)))
    assert off["context_precision"] == pytest.approx((ASKED + STATED) / 4, abs=1e-6), \
        "the useful chunk at rank 2: precision@2 of its grade"


def test_a_reference_adds_context_recall_and_an_empty_one_is_a_recorded_failure():
    scores = judge("What is the maximum file size?", "15 GB.", CHUNKS, reference="The largest upload allowed is 15 GB.")
    assert scores["context_recall"] == 0.0, "support 2/5 (15, gb of larg, upload, allow, 15, gb) is not above one half"
    stated = judge("What is the maximum file size?", "15 GB.", CHUNKS, reference="The maximum file size is 15 GB.")
    assert stated["context_recall"] == 1.0, f"support {STATED} is above one half"
    worded = judge("What is the maximum file size?", "15 GB.", CHUNKS, reference="Files can be at most 15 GB.")
    assert worded["context_recall"] == 1.0
    empty = judge("What is the maximum file size?", "15 GB.", CHUNKS, reference="", llm=OfflineClient())
    assert empty["context_recall"] is None and empty["failures"] == {"context_recall": NO_STATEMENTS}


def test_bad_contexts_are_refused_with_their_position():
    with pytest.raises(ConfigError, match=r"context 2: expected a string or a mapping with a 'text' string"):
        judge("q?", "a.", ["fine", {"chunk_id": "x"}])
    with pytest.raises(ConfigError, match=r"context 2: chunk id 'a' is given twice"):
        judge("q?", "a.", [{"chunk_id": "a", "text": "x"}, {"chunk_id": "a", "text": "y"}])
