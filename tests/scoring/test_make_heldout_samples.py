"""scripts/make_heldout_samples.py's BEGIN, LFQA-Verification, WikiQA and LLMBar readers on tiny hand-made inputs.

The real sources are fetched, not committed (tests/scoring/heldout/PROVENANCE.txt); these inputs copy their
layout so the reading, the labels, the pairing and the seeded sample are checked without them.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import PROJECT_ROOT

BEGIN_TSV = "\n".join("\t".join(row) for row in [
    ("model_name", "data_source", "knowledge", "message", "response", "begin_label"),
    ("t5", "wow", "Crayola began with chalk.", "Who makes crayons?", "I like art.", "Not fully attributable"),
    ("gpt2", "wow", "Crayola began with chalk.", "Who makes crayons?", "Crayola began with chalk.",
     "Fully attributable"),
    ("ctrl", "wow", "Paris is in France.", "Been to Paris?", "Paris is in France.", "Fully attributable"),
    ("doha", "wow", "Paris is in France.", "Tell me more", "Nice.", "Generic"),
]) + "\n"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("make_heldout_samples",
                                                  PROJECT_ROOT / "scripts" / "make_heldout_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_begin_rows_keep_every_response_with_its_label(script, tmp_path):
    (tmp_path / "begin.tsv").write_text(BEGIN_TSV, encoding="utf-8")
    rows = script.begin_rows(tmp_path / "begin.tsv")
    assert [(r["id"], r["label"], r["model"]) for r in rows] == [
        ("begin-wow-0", "Not fully attributable", "t5"), ("begin-wow-1", "Fully attributable", "gpt2"),
        ("begin-wow-2", "Fully attributable", "ctrl"), ("begin-wow-3", "Generic", "doha")]
    assert rows[0]["question"] == "Who makes crayons?" and rows[0]["context"] == "Crayola began with chalk."


def test_begin_pairs_one_turn_s_attributable_and_unattributable_responses(script, tmp_path):
    (tmp_path / "begin.tsv").write_text(BEGIN_TSV, encoding="utf-8")
    assert list(script.begin_pairs(script.begin_rows(tmp_path / "begin.tsv"))) == [
        {"id": "begin-wow-0", "question": "Who makes crayons?", "context": "Crayola began with chalk.",
         "good": "Crayola began with chalk.", "bad": "I like art."}]


def test_lfqa_sentences_take_the_majority_label_and_pairs_the_first_of_each(script, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "annotations").mkdir()
    docs = [{"question_id": 7, "question": "Why?", "docs": [{"doc_id": "w:1", "title": "t", "text": "Doc one."},
                                                             {"doc_id": "w:2", "title": "t", "text": "Doc two."}]}]
    (tmp_path / "docs" / "docs-webgpt.json").write_text(json.dumps(docs), encoding="utf-8")
    labels = [["supported", "supported", "partially"], ["not_supported", "partially", "not_supported"],
              ["supported", "partially", "not_supported"]]
    for name in script.LFQA_SETS:
        annotations = [{"question_id": 7, "question": "Why?", "answers": [" A.", "B.", "C."],
                        "annotations": [{"answer": text, "labels": votes}
                                        for text, votes in zip([" A.", "B.", "C."], labels)]}]
        (tmp_path / "annotations" / f"annotations-{name}.json").write_text(json.dumps(annotations), encoding="utf-8")
    answers = list(script.lfqa_answers(tmp_path))
    sentences = list(script.lfqa_sentences(answers))
    assert [(s["id"], s["answer"], s["label"]) for s in sentences[:3]] == [
        ("lfqa-gpt3_wdoc-7-0", "A.", "supported"), ("lfqa-gpt3_wdoc-7-1", "B.", "not_supported"),
        ("lfqa-gpt3_wdoc-7-2", "C.", "none")]
    assert len(sentences) == 6 and sentences[0]["contexts"] == ["Doc one.", "Doc two."]
    assert [(p["id"], p["good"], p["bad"]) for p in script.lfqa_pairs(answers)] == [
        ("lfqa-gpt3_wdoc-7", "A.", "B."), ("lfqa-alpaca_wdoc-7", "A.", "B.")]


WIKIQA_TSV = "\n".join("\t".join(row) for row in [
    ("QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label"),
    ("Q1", "how are glacier caves formed?", "D1", "Glacier cave", "D1-0", "Glacier caves are often called ice caves .",
     "0"),
    ("Q1", "how are glacier caves formed?", "D1", "Glacier cave", "D1-1", "A glacier cave is a cave formed within the "
     "ice of a glacier .", "1"),
    ("Q1", "how are glacier caves formed?", "D1", "Glacier cave", "D1-2", "Water flows through the ice .", "0"),
    ("Q2", "how much is 1 tablespoon of water", "D2", "Tablespoon", "D2-0", "This tablespoon is about 15 ml .", "1"),
    ("Q3", "who wrote it?", "D3", "Novel", "D3-0", "A novel is long .", "0"),
    ("Q3", "who wrote it?", "D3", "Novel", "D3-1", "It was written by \"Ann\" .", "1"),
]) + "\n"


def test_wikiqa_pairs_one_question_s_first_answering_and_first_other_sentence(script, tmp_path):
    """A question without a non-answering sentence (Q2) gives no pair; quotes inside a sentence stay as written."""
    (tmp_path / "wikiqa.tsv").write_text(WIKIQA_TSV, encoding="utf-8")
    assert list(script.wikiqa_pairs(tmp_path / "wikiqa.tsv")) == [
        {"id": "wikiqa-Q1", "question": "how are glacier caves formed?", "title": "Glacier cave",
         "good": "A glacier cave is a cave formed within the ice of a glacier .",
         "bad": "Glacier caves are often called ice caves ."},
        {"id": "wikiqa-Q3", "question": "who wrote it?", "title": "Novel", "good": 'It was written by "Ann" .',
         "bad": "A novel is long ."}]


def test_llmbar_pairs_put_the_labelled_output_first(script, tmp_path):
    rows = [{"input": "Convert 15 C to F.", "output_1": "77 F", "output_2": "59 F", "label": 2},
            {"input": "Name a card game.", "output_1": "Poker.", "output_2": "Tag.", "label": 1}]
    (tmp_path / "dataset.json").write_text(json.dumps(rows), encoding="utf-8")
    assert list(script.llmbar_pairs(tmp_path / "dataset.json", "llmbar_natural")) == [
        {"id": "llmbar_natural-0", "question": "Convert 15 C to F.", "good": "59 F", "bad": "77 F"},
        {"id": "llmbar_natural-1", "question": "Name a card game.", "good": "Poker.", "bad": "Tag."}]
    assert set(script.LLMBAR_SETS) >= {"llmbar_natural.jsonl", "llmbar_neighbor.jsonl", "mtbench_human.jsonl"}


def test_the_sample_is_seeded_and_keeps_source_order(script):
    rows = [{"n": n} for n in range(10)]
    assert [r["n"] for r in script.sample(rows, size=4)] == [0, 2, 6, 9]
    assert script.sample(rows, size=10) == rows
