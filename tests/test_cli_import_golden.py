"""``rag-assets import-golden`` then ``rag-assets run``: the next golden-set version holds the imported items; a file
with an item that cannot be located in the corpus imports nothing (exit 2) unless ``--skip-unlocated`` is given."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.settings import SQLITE_FILE_NAME
from tests.conftest import SharedCheckout


def test_items_imported_between_two_runs_are_in_the_next_golden_version_and_evaluated(
        project_env: Path, checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    main(["run", "--no-production"])
    (first,) = (project_env / "golden").glob("*/golden-v1.ragas.jsonl")
    rows = [json.loads(line) for line in first.read_text().splitlines()[:5]]
    team = tmp_path / "team.jsonl"
    team.write_text("".join(json.dumps({**row, "user_input": f"Asked by the team: {row['user_input']}"}) + "\n"
                            for row in rows))
    assert main(["import-golden", str(team), "--format", "ragas"]) == 0
    assert "5 new golden items imported" in capsys.readouterr().out

    main(["run", "--no-production", "--summary-json", str(tmp_path / "summary.json")])

    out = tmp_path / "newest.jsonl"
    assert main(["export", "--format", "jsonl", "--out", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    imported = [i for i in items if i["item_id"].startswith("ragas:")]
    assert len(items) == 53 and sorted(i["question"] for i in imported) == sorted(
        f"Asked by the team: {row['user_input']}" for row in rows)
    assets = json.loads((tmp_path / "summary.json").read_text())["assets"]
    (golden,) = assets["golden_set"].values()
    (evaluation,) = assets["evaluation"].values()
    assert (golden["golden_version"], golden["items"], golden["added"]) == (2, 53, 5)
    assert evaluation["items"] == 53


#: A team's golden set of three items, the second's reference context in no document of the sample corpus; a blank
#: line before it, so its row (2) and its line in the file (3) differ.
TEAM_ROWS = [
    {"id": "file-size", "user_input": "How large may a synced file be?", "reference": "2 GB on every plan.",
     "reference_contexts": ["The maximum file size is 2 GB for every plan."]},
    {"id": "invoices", "user_input": "When are invoices sent?", "reference": "On the first day of each month.",
     "reference_contexts": ["Invoices are sent by post on the first day of each month."]},
    {"id": "rotation", "user_input": "How often are vault keys rotated?", "reference": "Every 180 days.",
     "reference_contexts": ["Kestrel Hub rotates every vault key automatically every 180 days."]},
]


@pytest.fixture(scope="module")
def snapshotted_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """A home after one ``rag-assets run --no-production`` on the sample corpus (a snapshot to pin to), made once."""
    def run(home: Path) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["run", "--no-production"]) == 0

    return SharedCheckout(tmp_path_factory.mktemp("snapshotted"), run, dagster_home="")


def _team_file(path: Path) -> Path:
    lines = [json.dumps(row) for row in TEAM_ROWS]
    path.write_text(f"{lines[0]}\n\n{lines[1]}\n{lines[2]}\n", encoding="utf-8")
    return path


def _store_rows(home: Path) -> dict[str, int]:
    """How many rows each table of the home's SQLite store holds."""
    with contextlib.closing(sqlite3.connect(home / SQLITE_FILE_NAME)) as conn:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables}


def _corpus_version(home: Path) -> str:
    with contextlib.closing(sqlite3.connect(home / SQLITE_FILE_NAME)) as conn:
        (version,), = conn.execute("SELECT version_id FROM corpus_snapshot").fetchall()
    return version


def test_one_unlocatable_item_of_three_imports_nothing_and_exits_2_naming_file_row_line_and_field(
        snapshotted_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = snapshotted_checkout.use(monkeypatch)
    team = _team_file(tmp_path / "team.jsonl")
    before = _store_rows(home)

    assert main(["import-golden", str(team), "--format", "ragas"]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"error: {team}: 1 of 3 items could not be located in corpus version {_corpus_version(home)}; "
                   "first: row 2 (line 3): reference_contexts[0] is not in any document ('Invoices are sent by post "
                   "on the first day of each month.'); nothing imported; re-run with --skip-unlocated to import the "
                   "2 others\n")
    assert _store_rows(home) == before, "no accepted item, decision or revision written"


def test_with_skip_unlocated_the_two_located_items_are_imported_and_the_third_listed(
        snapshotted_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = snapshotted_checkout.use(monkeypatch)
    team = _team_file(tmp_path / "team.jsonl")

    assert main(["import-golden", str(team), "--format", "ragas", "--skip-unlocated"]) == 0

    out, err = capsys.readouterr()
    version = _corpus_version(home)
    assert out.splitlines()[0] == f"3 items read, 2 located in corpus {version}, 2 new golden items imported"
    assert err == ("  not imported: invoices: row 2 (line 3): reference_contexts[0] is not in any document "
                   "('Invoices are sent by post on the first day of each month.')\n")
    with contextlib.closing(sqlite3.connect(home / SQLITE_FILE_NAME)) as conn:
        imported = sorted(item for (item,) in conn.execute(
            "SELECT candidate_id FROM review_decision WHERE reviewer = 'import:ragas'"))
    assert imported == ["ragas:file-size", "ragas:rotation"]
