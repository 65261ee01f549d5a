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
from rag_assets.golden.importers import content_id
from rag_assets.settings import SQLITE_FILE_NAME
from tests.conftest import SharedCheckout


def test_items_imported_between_two_runs_are_in_the_next_golden_version_and_evaluated(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = first_cli_run_checkout.use(monkeypatch)  # after a first run (the module's fixture below)
    (first,) = (home / "golden").glob("*/golden-v1.ragas.jsonl")
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
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = first_cli_run_checkout.use(monkeypatch)
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
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = first_cli_run_checkout.use(monkeypatch)
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


def _refused_and_unchanged(home: Path, team: Path, capsys: pytest.CaptureFixture[str], message: str) -> None:
    """``import-golden team`` exits 2 with ``message`` as its one line and writes nothing to the store."""
    before = _store_rows(home)
    assert main(["import-golden", str(team), "--format", "ragas"]) == 2
    assert capsys.readouterr() == ("", f"error: {team}: {message}\n")
    assert _store_rows(home) == before, "no accepted item, decision or revision written"


@pytest.mark.parametrize(("cell", "start"), [('"=HYPERLINK(""http://x"",""q"")"', "="), ("=LOWER(A1)", "="),
                                             ("+1+1", "+"), ("-1+1", "-"), ("@SUM(A1)", "@")])
def test_a_ragas_csv_whose_question_is_a_formula_imports_nothing_and_exits_2_naming_file_row_and_field(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], cell: str, start: str):
    home = first_cli_run_checkout.use(monkeypatch)
    team = tmp_path / "team.csv"
    team.write_text("user_input,reference,reference_contexts\n"
                    '"How large may a synced file be?","2 GB on every plan.",'
                    '"[""The maximum file size is 2 GB for every plan.""]"\n'
                    f'{cell},"2 GB on every plan.","[""The maximum file size is 2 GB for every plan.""]"\n',
                    encoding="utf-8")
    _refused_and_unchanged(home, team, capsys, f"row 2: field 'user_input' starts with {start!r} (a spreadsheet "
                                               "formula); remove it or prefix it with an apostrophe")


def test_a_ragas_jsonl_whose_reference_is_a_json_number_imports_nothing_and_exits_2(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = first_cli_run_checkout.use(monkeypatch)
    team = tmp_path / "team.jsonl"
    team.write_text("".join(json.dumps(row) + "\n" for row in [TEAM_ROWS[0], {**TEAM_ROWS[2], "reference": 42}]),
                    encoding="utf-8")
    _refused_and_unchanged(home, team, capsys, "row 2: field 'reference' must be a string, got int")


SIZE = {"user_input": "How large may a synced file be?",
        "reference_contexts": ["The maximum file size is 2 GB for every plan."]}


def test_a_file_asking_one_question_twice_with_different_references_imports_nothing_and_exits_2_naming_both_rows(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    home = first_cli_run_checkout.use(monkeypatch)
    team = tmp_path / "team.jsonl"
    rows = [{**SIZE, "reference": "2 GB on every plan."}, {**TEAM_ROWS[2], "id": ""},
            {**SIZE, "user_input": "How large may a  synced file be? ", "reference": "42"}]
    team.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    _refused_and_unchanged(home, team, capsys, "row 3: field 'reference' differs from row 1's for the same "
                                               "user_input ('How large may a synced file be?'); keep one of the two rows")


def _export(version: int, out: Path) -> dict[str, str]:
    """Golden-set version ``version``'s items asking SIZE's question: item id -> reference."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["export", "--format", "jsonl", "--golden-version", str(version), "--out", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {i["item_id"]: i["reference_answer"] for i in items if i["question"] == SIZE["user_input"]}


def test_a_corrected_reference_imported_again_replaces_the_old_one_in_the_next_version_only_and_says_so(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    """The tester's case: a team corrects a reference in its ragas file (no ids: the id is a hash of question and
    reference) and imports it again. The item gets a new revision, as an expert's edit gives one; the golden-set
    version made before keeps the old reference, the next one holds the item once, with the new reference."""
    first_cli_run_checkout.use(monkeypatch)
    team = tmp_path / "team.jsonl"
    team.write_text(json.dumps({**SIZE, "reference": "2 GB on every plan."}) + "\n", encoding="utf-8")
    assert main(["import-golden", str(team), "--format", "ragas"]) == 0
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", "--no-production"]) == 0
    capsys.readouterr()
    item_id = f"ragas:{content_id('ragas', SIZE['user_input'], '2 GB on every plan.')}"
    assert _export(2, tmp_path / "v2.jsonl") == {item_id: "2 GB on every plan."}

    team.write_text(json.dumps({**SIZE, "reference": "42"}) + "\n", encoding="utf-8")
    assert main(["import-golden", str(team), "--format", "ragas"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines()[:2] == [
        f"1 items read, 1 located in corpus {_corpus_version(first_cli_run_checkout.home)}, 0 new golden items imported, "
        "1 replaced",
        f"  replaced: {item_id} by row 1 (line 1): reference '2 GB on every plan.' -> '42' (now revision 2; the "
        "golden-set versions made before keep the revision they hold)"]
    assert main(["import-golden", str(team), "--format", "ragas"]) == 0
    assert "0 new golden items imported\n" in capsys.readouterr().out, "the same file again changes nothing"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", "--no-production"]) == 0

    assert _export(2, tmp_path / "v2-again.jsonl") == {item_id: "2 GB on every plan."}, "version 2 untouched"
    assert _export(3, tmp_path / "v3.jsonl") == {item_id: "42"}


def _types(export: Path) -> dict[str, str]:
    """question -> question type of a JSONL golden-set export."""
    return {i["question"]: i["question_type"] for i in map(json.loads, export.read_text(encoding="utf-8").splitlines())}


def test_the_ragas_export_imported_into_a_new_home_keeps_every_item_its_type_and_the_decline_gate(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    """The tester's case: the ragas export of the first run, imported into a fresh home, used to lose its 6
    adversarial items (no reference contexts, by design) and with them decline accuracy, the gate on them."""
    first_cli_run_checkout.use(monkeypatch)
    (exported,) = (first_cli_run_checkout.home / "golden").glob("*/golden-v1.ragas.jsonl")
    types = _types(exported.with_name("golden-v1.jsonl"))
    (first,) = first_cli_run_checkout.made.summary["assets"]["evaluation"].values()
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RAG_ASSETS_CURATION_ROOT", str(tmp_path / "curation"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", "--no-production"]) == 0  # the snapshot; nothing reviewed, no golden set

    assert main(["import-golden", str(exported), "--format", "ragas"]) == 0
    out, err = capsys.readouterr()
    assert (out.splitlines()[0], err) == (
        f"48 items read, 48 located in corpus {_corpus_version(tmp_path / 'home')}, 48 new golden items imported", "")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", "--no-production", "--summary-json", str(tmp_path / "summary.json")]) == 0
        assert main(["export", "--format", "jsonl", "--out", str(tmp_path / "again.jsonl")]) == 0

    assert _types(tmp_path / "again.jsonl") == types and list(types.values()).count("adversarial") == 6
    (again,) = json.loads((tmp_path / "summary.json").read_text())["assets"]["evaluation"].values()
    assert (again["items"], again["decline_accuracy"]) == (first["items"], first["decline_accuracy"]) == (48, 1.0)


def test_an_exported_item_without_contexts_whose_type_was_removed_imports_nothing_and_exits_2_naming_it(
        first_cli_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    """The adversarial items of the export are imported; one whose question type and synthesizer name were taken
    out says nothing about being unanswerable: a data problem, refused in one line."""
    home = first_cli_run_checkout.use(monkeypatch)
    (exported,) = (home / "golden").glob("*/golden-v1.ragas.jsonl")
    rows = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    row = next(n for n, r in enumerate(rows) if r["question_type"] == "adversarial")
    rows[row] = {k: v for k, v in rows[row].items() if k not in ("question_type", "synthesizer_name")}
    team = tmp_path / "team.jsonl"
    team.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _refused_and_unchanged(home, team, capsys, (
        f"1 of 48 items could not be located in corpus version {_corpus_version(home)}; first: row {row + 1} "
        f"(line {row + 1}): has no reference contexts to locate (mark it question_type: adversarial if nothing in "
        "the corpus answers it); nothing imported; re-run with --skip-unlocated to import the 47 others"))
