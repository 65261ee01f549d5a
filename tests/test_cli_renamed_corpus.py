"""``rag-assets run`` after documents are renamed, deleted or edited, on a home whose golden set was reviewed: a
document renamed with its content unchanged keeps its golden items (their evidence moves with it, and the golden
set says they moved); the corpus snapshot counts and names the renamed and deleted documents; and the golden set's
stale figures say which items went stale in this version and how many are stale in all."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from rag_assets.cli import main
from tests.conftest import SharedCheckout


def _run(summary: Path, *args: str) -> dict:
    assert main(["run", "--no-production", "--summary-json", str(summary), *args]) == 0
    return json.loads(summary.read_text(encoding="utf-8"))


def _only(data: dict, asset: str) -> dict:
    (meta,) = data["assets"][asset].values()
    return meta


def _items_by_document(golden: dict) -> dict[str, set[str]]:
    """Document path -> the ids of the golden items with evidence in it, from the golden set's JSONL export."""
    found: dict[str, set[str]] = {}
    for line in Path(golden["export_jsonl"]).read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        for span in item["evidence"]:
            found.setdefault(span["path"], set()).add(item["item_id"])
    return found


def _line(out: str, asset: str) -> str:
    (line,) = [line for line in out.splitlines() if line.split()[:1] == [asset]]
    return line


def _apart(by_document: dict[str, set[str]], count: int) -> Sequence[str]:
    """``count`` documents holding golden items no other of them holds, the most items first."""
    chosen: list[str] = []
    for path in sorted(by_document, key=lambda p: (-len(by_document[p]), p)):
        if all(not by_document[path] & by_document[other] for other in chosen):
            chosen.append(path)
    return chosen[:count]


def test_a_renamed_document_keeps_its_items_and_the_snapshot_counts_renamed_and_deleted_documents(
        first_cli_run: SharedCheckout, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    first, sample_corpus = first_cli_run.made.summary, first_cli_run.corpus
    golden = _only(first, "golden_set")
    by_document = _items_by_document(golden)
    renamed, deleted = _apart(by_document, 2)
    moved, gone = by_document[renamed], by_document[deleted]
    new_path = str(Path(renamed).with_name(f"moved-{Path(renamed).name}"))
    (sample_corpus / renamed).rename(sample_corpus / new_path)
    (sample_corpus / deleted).unlink()
    capsys.readouterr()

    second = _run(tmp_path / "second.json")
    out = capsys.readouterr().out

    snapshot = _only(second, "corpus_snapshot")
    assert (snapshot["documents_added"], snapshot["documents_changed"], snapshot["documents_removed"],
            snapshot["documents_renamed"]) == (0, 0, 1, 1)
    assert f"| {renamed} -> {new_path} | renamed |" in snapshot["diff"]
    assert f"| {deleted} | removed |" in snapshot["diff"]
    assert "documents_removed=1, documents_renamed=1" in _line(out, "corpus_snapshot")
    assert _only(second, "question_candidates")["requeued_stale_items"] == len(gone), "a rename re-queues nothing"
    after = _only(second, "golden_set")
    assert after["items"] == golden["items"] - len(gone)
    assert (after["stale_new"], after["stale_total"], after["moved"], after["removed"], after["changed"]) == (
        len(gone), len(gone), len(moved), 0, 0)
    assert all(f"| {item} | moved |" in after["diff"] for item in moved)
    now = _items_by_document(after)
    assert renamed not in now and now[new_path] == moved, "the moved items' evidence is pinned to the new path"
    assert f"stale_new={len(gone)}, stale_total={len(gone)}, moved={len(moved)}" in _line(out, "golden_set")


def test_items_still_stale_from_an_earlier_version_are_not_counted_as_gone_stale_again(
        first_cli_run: SharedCheckout, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    sample_corpus = first_cli_run.corpus
    by_document = _items_by_document(_only(first_cli_run.made.summary, "golden_set"))
    (deleted,) = _apart(by_document, 1)
    (sample_corpus / deleted).unlink()
    went = _only(_run(tmp_path / "second.json"), "golden_set")
    assert (went["stale_new"], went["stale_total"]) == (len(by_document[deleted]), len(by_document[deleted]))

    untouched = sorted(p for p in sample_corpus.rglob("*.md")
                       if str(p.relative_to(sample_corpus)) not in by_document)[0]
    untouched.write_text(untouched.read_text(encoding="utf-8") + "\n\nA new paragraph nobody asked about.\n",
                         encoding="utf-8")
    capsys.readouterr()
    third = _run(tmp_path / "third.json")
    out = capsys.readouterr().out

    still = _only(third, "golden_set")
    assert (still["stale_new"], still["stale_total"], still["items"]) == (0, len(by_document[deleted]), went["items"])
    assert "stale_new=0, stale_total=" in _line(out, "golden_set")
    assert main(["status"]) == 0
    assert f"{went['items']} items, stale_new=0, stale_total={len(by_document[deleted])}" in capsys.readouterr().out
