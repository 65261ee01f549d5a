"""``rag-assets run --corpus OTHER`` on a reviewed home, where OTHER is a copy of the corpus folder with two files
edited (``cp -r corpus corpus2``): the same corpus, moved. Its new version continues the version the store's
corpus had (the one sharing most of its documents), so the accepted items carry over as they do for the same edit
in place: the run builds the golden set, and does not send the user to a review that has nothing in it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.cli import main
from rag_assets.cli.commands import next_step, queued_for_review
from rag_assets.cli.summary import RunState, Shown
from tests.test_cli import checkout_curation  # noqa: F401  (a fixture)
from tests.test_cli_renamed_corpus import _apart, _items_by_document, _line, _only


def _run(summary: Path, *args: str) -> dict:
    assert main(["run", "--no-production", "--summary-json", str(summary), *args]) == 0
    return json.loads(summary.read_text(encoding="utf-8"))


def test_a_copied_and_edited_corpus_folder_continues_the_stores_corpus_and_keeps_its_golden_items(
        project_env: Path, checkout_curation: Path, sample_corpus: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    monkeypatch.setenv("DAGSTER_HOME", "")
    first = _run(tmp_path / "first.json")
    before = _only(first, "corpus_snapshot")["corpus_version"]
    golden = _only(first, "golden_set")
    by_document = _items_by_document(golden)
    (rewritten,) = _apart(by_document, 1)
    untouched = sorted(str(p.relative_to(sample_corpus)) for p in sample_corpus.rglob("*.md")
                       if str(p.relative_to(sample_corpus)) not in by_document)[0]
    copy = tmp_path / "corpus2"
    shutil.copytree(sample_corpus, copy)
    (copy / rewritten).write_text("# Gone\n\nThis page no longer says what it said.\n", encoding="utf-8")
    (copy / untouched).write_text((copy / untouched).read_text(encoding="utf-8")
                                  + "\n\nA new paragraph nobody asked about.\n", encoding="utf-8")
    stale = len(by_document[rewritten])
    capsys.readouterr()

    second = _run(tmp_path / "second.json", "--corpus", str(copy))
    out = capsys.readouterr().out

    snapshot = _only(second, "corpus_snapshot")
    assert snapshot["new_version"] and snapshot["corpus_version"] != before
    assert snapshot["parent_version"] == before, "the copy continues the store's corpus"
    assert (snapshot["documents_added"], snapshot["documents_changed"], snapshot["documents_removed"],
            snapshot["documents_renamed"]) == (0, 2, 0, 0)
    assert _only(second, "question_candidates")["requeued_stale_items"] == stale
    after = _only(second, "golden_set")
    assert (after["items"], after["stale_new"], after["stale_total"], after["removed"]) == (
        golden["items"] - stale, stale, stale, 0)
    assert f"items={golden['items'] - stale}" in _line(out, "golden_set")
    assert "nobody has reviewed" not in out and "Open " not in out
    assert out.splitlines()[-1].endswith(f" succeeded for corpus version {snapshot['corpus_version']}")


def _queue_shown(pending: int) -> RunState:
    queue = dg.AssetMaterialization(dg.AssetKey("curation_queue"), partition="cv-000000000001",
                                    metadata={"pending": dg.MetadataValue.int(pending)})
    return RunState([Shown("run-1", False, queue)], [])


def test_the_next_step_sends_to_the_review_file_only_when_it_lists_a_candidate(tmp_path: Path):
    empty = next_step("cv-000000000001", queued_for_review(_queue_shown(0)), tmp_path)
    assert empty == ("\nnext step: nothing to review for corpus version cv-000000000001: no candidate waits for review "
                     "and no earlier version it continues holds accepted items, so no golden set is built. `rag-assets "
                     "import-golden FILE` a golden set you have, or run on the corpus folder whose versions were "
                     "reviewed (`rag-assets run --corpus FOLDER`).")
    waiting = next_step("cv-000000000001", queued_for_review(_queue_shown(3)), tmp_path)
    assert f"Open {tmp_path / 'outbox' / 'review-cv-000000000001.xlsx'} (or the .csv beside it)" in waiting
    assert queued_for_review(RunState([], [])) is None
    review, inbox = tmp_path / "outbox" / "review-cv-000000000001.xlsx", tmp_path / "inbox"
    disagreed = next_step("cv-000000000001", queued_for_review(_queue_shown(3)), tmp_path, conflicts=2)
    assert disagreed == (
        "\nnext step: 2 candidates of corpus version cv-000000000001 wait because reviewers disagree (1 other candidate "
        f"waits for a first decision), so no golden set is built from them. Open {review} (or the .csv beside it), "
        "which lists each reviewer's decision of every conflict, give each candidate one decision (accept, reject or "
        "edit; the reviewers agreeing, or one reviewer named `adjudicator:<name>` settling it), save it as a new review "
        f"file into {inbox}, and run `rag-assets run` again."), "somebody reviewed: the conflicts wait, not a review"
    one = next_step("cv-000000000001", queued_for_review(_queue_shown(1)), tmp_path, conflicts=1)
    assert one.startswith("\nnext step: 1 candidate of corpus version cv-000000000001 waits because reviewers "
                          "disagree, so no golden set is built from it. Open ")
