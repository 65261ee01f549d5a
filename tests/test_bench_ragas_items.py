"""bench/ragas_items.py: the judged items ragas is given, and a saved ragas bill used only for the same items."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

from rag_assets.golden.models import GoldenItem
from rag_assets.rag.models import RagResponse, RetrievedChunk, failed

_BENCH = Path(__file__).resolve().parents[1] / "bench"
_SPEC = importlib.util.spec_from_file_location("ragas_items", _BENCH / "ragas_items.py")
ragas_items = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(ragas_items)


def _world() -> SimpleNamespace:
    items = [GoldenItem("g1", 1, "factual", "How is a key rotated?", "In the settings page.", (), "v1"),
             GoldenItem("g2", 1, "adversarial", "Who wrote the moon?", "The corpus does not say.", (), "v1"),
             GoldenItem("g3", 1, "factual", "Unanswered?", "Yes.", (), "v1")]
    responses = {
        "g1": RagResponse("g1", "Open the settings page.", retrieved=(
            RetrievedChunk("c1", "Keys are rotated in settings.", 2.0, 1),
            RetrievedChunk(None, "own words", 1.0, 2, own_id="o1"))),
        "g2": RagResponse("g2", None),
        "g3": failed("g3", "timeout", "no answer in 30 s"),
    }
    return SimpleNamespace(items=items, responses=responses)


def test_judged_items_are_written_in_ragas_fields_and_failed_answers_left_out(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    digest = ragas_items.write_judged_items(_world(), path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {"item_id": "g1", "question_type": "factual", "user_input": "How is a key rotated?",
         "response": "Open the settings page.", "retrieved_contexts": ["Keys are rotated in settings.", "own words"],
         "reference": "In the settings page."},
        {"item_id": "g2", "question_type": "adversarial", "user_input": "Who wrote the moon?", "response": "",
         "retrieved_contexts": [], "reference": "The corpus does not say."},
    ]
    assert digest == ragas_items.file_sha256(path) and len(digest) == 64


def test_a_saved_bill_counts_only_for_the_items_it_was_measured_on(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    assert ragas_items.measured_bill(path.with_name("missing.jsonl")) is None
    digest = ragas_items.write_judged_items(_world(), path)
    assert ragas_items.measured_bill(path) is None
    bill = {"items_sha256": digest, "calls": 11.0, "input": 14000.5, "output": 116.0, "model": "m"}
    ragas_items.bill_path(path).write_text(json.dumps(bill), encoding="utf-8")
    assert ragas_items.bill_path(path) == tmp_path / "set.ragas.json"
    assert ragas_items.measured_bill(path) == bill
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert ragas_items.measured_bill(path) is None
