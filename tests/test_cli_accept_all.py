"""A team's first day on its own corpus: ``rag-assets run --corpus DIR`` ends in a next step naming the review
file; ``--accept-all`` (trial mode) builds a golden set from the candidates, labelled unreviewed in the store's
items, every export format, the asset metadata, the summary and the report; an expert's later review then
removes the label item by item."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from rag_assets.cli import main
from rag_assets.curation.review_writer import write_review_files
from rag_assets.golden.export import FORMATS
from rag_assets.golden.importers import read_ragas_testset
from rag_assets.settings import Settings
from tests.conftest import SAMPLE_CORPUS

#: A small corpus of the team's own: six Markdown pages of the bundled sample.
PAGES = ("overview.md", "quickstart.txt", "limits.md", "encryption.md", "selective-sync.md", "troubleshooting.md")
UNREVIEWED = "generated:unreviewed"


@pytest.fixture
def team_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "team-docs"
    docs.mkdir()
    for name in PAGES:
        shutil.copyfile(SAMPLE_CORPUS / "v2" / name, docs / name)
    return docs


def _summary(path: Path) -> dict:
    return json.loads(path.read_text())["assets"]


def _exported_origins(folder: Path) -> dict[str, list[str]]:
    """The origin of every item, as each export format writes it."""
    origins = {}
    for file_format, suffix in FORMATS.items():
        out = folder / f"golden{suffix}"
        assert main(["export", "--format", file_format, "--out", str(out)]) == 0
        if file_format == "jsonl":
            origins[file_format] = [json.loads(line)["origin"] for line in out.read_text().splitlines()]
        elif file_format == "ragas":
            origins[file_format] = [json.loads(line)["origin"] for line in out.read_text().splitlines()]
            assert len(read_ragas_testset(out)) == len(origins[file_format]), "still a ragas test set"
        elif file_format == "csv":
            origins[file_format] = list(pd.read_csv(out, encoding="utf-8-sig")["origin"])
        else:
            origins[file_format] = list(pd.read_parquet(out)["origin"])
    return origins


def test_a_fresh_corpus_ends_in_exit_0_and_the_review_files_path(
        project_env: Path, team_docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "--corpus", str(team_docs), "--no-production"]) == 0
    out = capsys.readouterr().out
    version = out.split("nobody has reviewed corpus version ")[1].split(" ")[0]
    review = Settings.from_env().curation_root / "outbox" / f"review-{version}.xlsx"
    assert f"next step: nobody has reviewed corpus version {version} yet. Open {review} (or the .csv beside it)" in out
    assert review.is_file() and review.with_suffix(".csv").is_file()
    assert "golden_set" not in out and "FAILED" not in out

    # two reviewers disagree on two candidates and decide nothing else: the run says the conflicts wait, not a review
    queued = [json.loads(line) for line in review.with_suffix(".jsonl").read_text().splitlines()]
    rows = queued[:2]
    inbox = review.parent.parent / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    for reviewer, decision in (("ana", "reject"), ("bob", "accept")):
        write_review_files([{**row, "decision": decision, "reviewer": reviewer} for row in rows],
                           inbox / f"{reviewer}.csv", tmp_path / f"{reviewer}.jsonl")
    assert main(["run", "--corpus", str(team_docs), "--no-production"]) == 1
    err = capsys.readouterr().err
    assert (f" 2 candidates of corpus version {version} wait because reviewers disagree ({len(queued) - 2} "
            "other candidates wait for a first decision), so no golden set is built from them. Open "
            f"{review} (or the .csv beside it)") in err, err
    assert "give each candidate one decision" in err and "review the candidates in" not in err


def test_accept_all_builds_a_golden_set_labelled_unreviewed_everywhere_until_an_expert_decides(
        project_env: Path, team_docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    summary = tmp_path / "summary.json"
    code = main(["run", "--corpus", str(team_docs), "--no-production", "--accept-all", "--summary-json", str(summary)])
    out = capsys.readouterr().out
    assert code == 0, out
    assets = _summary(summary)
    (queue,) = assets["curation_queue"].values()
    (decisions,) = assets["curated_decisions"].values()
    (golden,) = assets["golden_set"].values()
    (answers,) = assets["rag_answers"].values()
    pending = queue["pending"]
    assert pending > 5
    assert decisions["accepted_unreviewed"] == pending and decisions["files_applied"] == 0
    assert (golden["golden_version"], golden["items"], golden["unreviewed"]) == (1, pending, pending)
    note = (f"UNREVIEWED: {pending} of {pending} golden items were accepted by --accept-all without review "
            f"(origin {UNREVIEWED})")
    assert golden["unreviewed_note"].startswith(note)
    assert (answers["answered"], answers["errors"]) == (pending, 0)
    golden_line = next(line for line in out.splitlines() if line.startswith("golden_set "))
    assert golden_line.rstrip().endswith(f"unreviewed={pending}")
    assert f"\n{note}" in out and "next step: nobody has reviewed" not in out
    outbox = Settings.from_env().curation_root / "outbox"
    assert f"trial mode: the candidates still wait for review in {outbox}" in out
    report = Path(next(line for line in out.splitlines() if line.startswith("report: ")).split(": ", 1)[1])
    html = report.read_text(encoding="utf-8")
    assert f'<div class="unreviewed-banner"><strong>UNREVIEWED GOLDEN SET</strong> — {note}' in html
    origins = _exported_origins(tmp_path)
    assert origins == {file_format: [UNREVIEWED] * pending for file_format in FORMATS}

    assert main(["run", "--corpus", str(team_docs), "--no-production"]) == 0
    again = capsys.readouterr().out
    assert "every asset is up to date" in again, "the trial's results hold for a plain run"
    assert f"\n{note}" in again, "and still say they are unreviewed"

    assert main(["status"]) == 0
    waiting = capsys.readouterr().out.split("waiting:")[1]
    assert (f"{pending} candidate questions of {golden['corpus_version']} wait for a review decision (undecided, or "
            "reviewers disagree)") in waiting
    assert f"; {pending} of them are in the golden set unreviewed (--accept-all)" in waiting, "they wait for an expert"

    # an expert reviews two of them: accept drops the label, reject takes the item out
    version = golden["corpus_version"]
    rows = [json.loads(line) for line in (outbox / f"review-{version}.jsonl").read_text().splitlines()]
    accepted, rejected = rows[0]["candidate_id"], rows[1]["candidate_id"]
    rows[0].update(decision="accept", reviewer="ana")
    rows[1].update(decision="reject", reviewer="ana")
    inbox = outbox.parent / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    write_review_files(rows, inbox / f"review-{version}.csv", tmp_path / "unused.jsonl")
    code = main(["run", "--corpus", str(team_docs), "--no-production", "--summary-json", str(summary)])
    out = capsys.readouterr().out
    assert code == 0, out
    (golden,) = _summary(summary)["golden_set"].values()
    assert (golden["golden_version"], golden["items"], golden["unreviewed"]) == (2, pending - 1, pending - 2)
    items = {json.loads(line)["item_id"]: json.loads(line)
             for line in Path(golden["export_jsonl"]).read_text().splitlines()}
    assert rejected not in items and items[accepted]["origin"] == "generated"
    assert sorted(i["origin"] for i in items.values()) == ["generated"] + [UNREVIEWED] * (pending - 2)
