"""The README's first command, minus the install: the CLI runs the lifecycle on the sample corpus."""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from rag_assets.cli.commands import KEY_FACTS, main, ui_command
from rag_assets.definitions import defs
from rag_assets.defs.sensors import corpus_sensor, curation_inbox_sensor, production_logs_sensor
from rag_assets.golden.export import FORMATS
from rag_assets.golden.importers import read_ragas_testset
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT, SharedCheckout


@pytest.fixture
def checkout_curation(project_env: Path) -> Path:
    """The curation folder as a checkout has it: with the bundled simulated review."""
    root = Settings.from_env().curation_root
    shutil.copytree(PROJECT_ROOT / "data" / "curation" / "sample", root / "sample")
    return root


def test_run_goes_from_corpus_to_golden_set_with_the_simulated_review(
        project_env: Path, checkout_curation: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path_factory: pytest.TempPathFactory):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["run"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert captured.err == "", "stderr is no terminal here: no progress, no events"
    assert "simulated expert review (bundled)" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line and line.split()[0] in (
        "corpus_snapshot", "golden_set", "rag_answers", "evaluation")}
    assert "documents=49, chunks=309" in lines["corpus_snapshot"]
    assert "golden_version=1, items=48, added=48" in lines["golden_set"]
    assert "answered=48, errors=0" in lines["rag_answers"]
    assert re.search(r"faithfulness=[01]\.\d{3}, ", lines["evaluation"])
    assert "thresholds=profile offline" in lines["evaluation"]
    assert "recommendation=REVIEW, current=reference-k5, candidate=reference-k3" in out
    assert next(line for line in out.splitlines() if line.startswith("ab_comparison")).endswith(
        ", errors=0, judge_failures=0")
    days = [line for line in out.splitlines() if line.startswith("production_sample")]
    assert [line.split()[1] for line in days] == [f"2026-11-{day}" for day in range(20, 27)]
    assert all("records=40, sample_size=30" in line and "judge_failures=0" in line for line in days)
    assert "bad_lines=2" in days[3] and "drift_alerts=0" in days[5] and "drift_alerts=0" not in days[6]
    assert "checks: 47 passed, 2 failed" in out, "every lifecycle check and each day's judge budget pass; day 26 alerts"
    assert "FAILED production_sample.drift_faithfulness [2026-11-26]: DRIFT faithfulness:" in out
    assert "7 production days scored" in out
    captured_lines = out.splitlines()
    assert not any("DEBUG" in line or "Warning" in line for line in captured_lines), "events go to the log file"
    table = [line for line in captured_lines if line.split(" ")[0] in KEY_FACTS or line.startswith("  FAILED")]
    assert len(table) == 10 + 7 + 2, "one line per materialized asset and partition, one per failed check"
    # the two input lines, the table's head, the checks line, seven files, the UI command, the closing line, blanks
    assert len(captured_lines) - len(table) <= 18, f"the table, the files and one closing line: {captured_lines}"
    closing = dict(line.split(": ", 1) for line in captured_lines
                   if line.startswith(("report: ", "golden set (", "event log: ", "judge review (")))
    assert Path(closing["judge review (for your experts)"]).suffix == ".xlsx"
    assert Path(closing["report"]).is_file() and closing["report"].endswith(".html")
    assert Path(closing["golden set (JSONL)"]).name == "golden-v1.jsonl" and Path(closing["golden set (ragas)"]).is_file()
    assert "RUN_START" in Path(closing["event log"]).read_text(encoding="utf-8")
    assert f"DAGSTER_HOME={project_env / 'dagster'} dagster dev -m rag_assets.definitions" in out
    assert (project_env / "dagster" / "dagster.yaml").exists(), "runs are kept for dagster dev"
    assert_dagster_dev_would_start_no_run(project_env / "dagster")
    assert main(["run", "--verbose"]) == 0
    again = capsys.readouterr().out
    assert "every asset is up to date" in again, "an unchanged home: nothing to run"
    headers = [line for line in again.splitlines() if re.match(r"^[a-z_]+ \[", line)]
    assert len(headers) == 10 + 7 and all("(earlier run " in line for line in headers), "what holds, from earlier runs"

    exports = tmp_path_factory.mktemp("exports")
    for file_format in ("jsonl", "ragas", "csv", "parquet"):
        assert main(["export", "--format", file_format, "--out", str(exports / f"g{FORMATS[file_format]}")]) == 0
    assert "golden set v1 (48 items, corpus cv-" in capsys.readouterr().out
    assert (exports / "g.jsonl").read_bytes() == Path(closing["golden set (JSONL)"]).read_bytes(), "the asset's export"
    ours = [json.loads(line) for line in (exports / "g.jsonl").read_text(encoding="utf-8").splitlines()]
    for frame in (pd.read_csv(exports / "g.csv"), pd.read_parquet(exports / "g.parquet")):
        assert frame["item_id"].tolist() == [r["item_id"] for r in ours]
        assert [json.loads(cell) for cell in frame["relevant_chunks"]] == [r["relevant_chunks"] for r in ours]
    ragas = read_ragas_testset(exports / "g.ragas.jsonl")
    assert [i.question for i in ragas] == [r["question"] for r in ours]
    assert main(["export", "--format", "csv", "--golden-version", "7"]) == 2
    err = capsys.readouterr().err
    assert "no golden-set version 7" in err and "(versions: 1)" in err


def assert_dagster_dev_would_start_no_run(dagster_home: Path) -> None:
    """The first ticks of the sensors ``dagster dev`` starts (fresh cursors) on the instance the CLI ran on
    request nothing: the corpus version has its partition, the review file was imported, every logged day
    was scored for the records it has, and every asset is up to date for its automation condition."""
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        assert len(instance.get_runs()) == 8, "the lifecycle run and 7 production days"
        for sensor in (corpus_sensor, curation_inbox_sensor, production_logs_sensor):
            with dg.build_sensor_context(instance=instance, definitions=defs, resources=defs.resources) as context:
                tick = sensor(context)
            assert isinstance(tick, dg.SkipReason) or tick.run_requests == [], (sensor.name, tick)
        assert len(json.loads(tick.cursor)["files"]) == 7, "the log sensor read every day's file, and requested none"
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        assert (first.total_requested, second.total_requested) == (0, 0)


@pytest.fixture(scope="module")
def unreviewed_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """``rag-assets run --no-review`` as the first run on a new home, with no review in the curation folder, once per
    module: the candidates wait in the outbox; ``made`` is what it printed."""
    def run(home: Path) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["run", "--no-review"]) == 0
        return out.getvalue()

    return SharedCheckout(tmp_path_factory.mktemp("unreviewed"), run, curation_sample=False)


@pytest.fixture
def unreviewed(unreviewed_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> str:
    """The home as the first ``run --no-review`` left it, whatever an earlier test did to it (the environment points
    at it); returns what that run printed."""
    unreviewed_checkout.use(monkeypatch)
    return unreviewed_checkout.made


def test_a_first_run_with_nothing_reviewed_queues_the_candidates_and_says_what_to_do_next(unreviewed: str):
    out = unreviewed  # `rag-assets run --no-review` on a new home (the fixture's first run)
    table = [line.split()[0] for line in out.splitlines() if line.split(" ")[0] in KEY_FACTS]
    assert table == ["corpus_snapshot", "question_candidates", "curation_queue"], "nothing built on no review"
    assert "not scored yet: waiting for a golden set of corpus version cv-" in out, (
        "production days wait for the golden set: with none, every logged question would be a coverage gap")
    assert "pending=50" in out and "FAILED" not in out
    version = out.split("nobody has reviewed corpus version ")[1].split(" ")[0]
    curation = Settings.from_env().curation_root
    assert f"Open {curation / 'outbox' / f'review-{version}.xlsx'} (or the .csv beside it)" in out
    assert (curation / "outbox" / f"review-{version}.xlsx").is_file()
    assert re.fullmatch(rf"run [0-9a-f-]+ succeeded for corpus version {version}", out.splitlines()[-1])


def test_run_on_a_missing_corpus_says_so_and_exits_2(project_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["run", "--corpus", str(tmp_path / "missing")]) == 2
    assert f"--corpus='{tmp_path / 'missing'}' is not an existing folder" in capsys.readouterr().err
    assert not project_env.exists(), "a bad argument leaves no home behind"


def test_compare_of_evaluations_not_in_the_store_names_them_and_exits_2(project_env: Path,
                                                                       capsys: pytest.CaptureFixture[str]):
    assert main(["compare", "ev-a", "ev-b"]) == 2
    assert capsys.readouterr().err == "error: no evaluation 'ev-a', 'ev-b'\n"
    assert main(["compare", "ev-a", "ev-x\nerror: forged"]) == 2
    assert capsys.readouterr().err == "error: no evaluation 'ev-a', 'ev-x\\nerror: forged'\n", (
        "an id cannot forge a line")


def test_compare_to_an_out_file_that_cannot_be_written_says_so_and_exits_2(
        project_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    missing = tmp_path / "no-such-folder" / "diff.md"
    assert main(["compare", "ev-a", "ev-b", "--out", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out='{missing}' is not a file in an existing folder; for example --out=diff.md\n")
    assert main(["compare", "ev-a", "ev-b", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out='{tmp_path}' is not a file (it is a folder); for example --out=diff.md\n")


def test_compare_written_to_a_file_prints_why_judge_scored_metrics_were_left_out(
        project_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from rag_assets.defs.assets.calibration import calibrations
    from tests.app.test_comparison import A, ANSWERS_A, ANSWERS_B, B, JUDGE, OTHER_JUDGE, stored_evaluation

    store = defs.resources["store"]
    a = stored_evaluation(store, calibrations(store), A, ANSWERS_A, OTHER_JUDGE)
    b = stored_evaluation(store, calibrations(store), B, ANSWERS_B, JUDGE)
    out = tmp_path / "diff.md"
    assert main(["compare", a, b, "--out", str(out)]) == 0
    note = (f"judge-scored metrics not compared: {a} was scored by judge configuration {OTHER_JUDGE.label()}, {b} "
            f"by another one, {JUDGE.label()}; one judge's scores are not comparable with another's; only the "
            "metrics no judge scores are compared")
    assert capsys.readouterr().out == f"comparison written to {out}\nnote: {note}\n"
    assert f"**Note:** {note}\n" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("RAG_ASSETS_SENSOR_INTERVAL", "5s", "RAG_ASSETS_SENSOR_INTERVAL='5s' is not a whole number of seconds above 0; "
                                         "for example RAG_ASSETS_SENSOR_INTERVAL=30"),
    ("RAG_ASSETS_PRODUCTION_START", "2026/01/01", "RAG_ASSETS_PRODUCTION_START='2026/01/01' is not an ISO date"),
    ("RAG_ASSETS_EVALUATION_CRON", "daily", "RAG_ASSETS_EVALUATION_CRON='daily' is not a cron expression"),
    ("RAG_ASSETS_DATABASE_URL", "postgres://ana:s3cret@db/rag",
     "RAG_ASSETS_DATABASE_URL='postgres://ana:***@db/rag' is not a SQLAlchemy URL with a known dialect; "
     "for example RAG_ASSETS_DATABASE_URL=postgresql+psycopg2://"),
    ("RAG_ASSETS_DATABASE_URL", "postgresql://ana:s3cret@127.0.0.1/rag",
     "RAG_ASSETS_DATABASE_URL='postgresql://ana:***@127.0.0.1/rag' is not usable here: its driver psycopg is not "
     "installed; for example RAG_ASSETS_DATABASE_URL=postgresql+psycopg2://"),
    ("RAG_ASSETS_LLM_RPM", "fast", "RAG_ASSETS_LLM_RPM='fast' is not a whole number of requests per minute above 0"),
    ("RAG_ASSETS_ALERT_WEBHOOK", "hooks.example.com/x?token=abc", "RAG_ASSETS_ALERT_WEBHOOK=(not shown"),
    ("RAG_ASSETS_JUDGE_MIN_KAPPA", "1.2", "RAG_ASSETS_JUDGE_MIN_KAPPA='1.2' is not a number between 0 and 1; "
                                         "for example RAG_ASSETS_JUDGE_MIN_KAPPA=0.6"),
    ("RAG_ASSETS_JUDGE_CALIBRATION_SEVERITY", "fatal",
     "RAG_ASSETS_JUDGE_CALIBRATION_SEVERITY='fatal' is not WARN or ERROR"),
    ("RAG_ASSETS_REPORT_URL", "nosuchproto://ana:s3cret@host/reports",
     "RAG_ASSETS_REPORT_URL='nosuchproto://...' is not a URL with a protocol fsspec knows; "
     "for example RAG_ASSETS_REPORT_URL=s3://bucket/reports"),
    ("RAG_ASSETS_REPORT_URL", "s3://bucket/reports",
     "RAG_ASSETS_REPORT_URL='s3://...' is not usable here (Install s3fs to access S3); for example "),
    ("RAG_ASSETS_MAX_COST_USD", "ten", "RAG_ASSETS_MAX_COST_USD='ten' is not a number of US dollars >= 0; "
                                       "for example RAG_ASSETS_MAX_COST_USD=10"),
    ("RAG_ASSETS_CELERY_BROKER", "redis:/host:6379/0?password=s3cret", "RAG_ASSETS_CELERY_BROKER=(not shown"),
])
def test_a_bad_setting_stops_with_one_line_and_exit_2_before_anything_is_written(
        project_env: Path, checkout_curation: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], variable: str, value: str, expected: str):
    monkeypatch.setenv(variable, value)
    before = sorted(p.relative_to(checkout_curation) for p in checkout_curation.rglob("*"))
    assert main(["run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"error: {expected}") and captured.err.count("\n") == 1
    assert "s3cret" not in captured.err and "token=abc" not in captured.err, "a URL's secret is never shown"
    assert not project_env.exists(), "no store, no Dagster home"
    assert sorted(p.relative_to(checkout_curation) for p in checkout_curation.rglob("*")) == before, "nothing staged"


def test_run_from_another_folder_stops_at_once_and_says_what_to_do(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.delenv("RAG_ASSETS_CORPUS_ROOT")
    monkeypatch.chdir(tmp_path)
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert f"corpus root {tmp_path / 'data' / 'corpus'} does not exist" in err
    assert "Run rag-assets from the project folder" in err and "--corpus DIR" in err
    assert not project_env.exists()


def test_version_and_plain_help(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == "rag-assets 0.1.0"
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text and "Run the lifecycle of a RAG golden set" in text


def test_ui_starts_dagster_dev_on_the_clis_dagster_home(project_env: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    command, env = ui_command(Settings.from_env())
    assert Path(command[0]).name == "dagster" and Path(command[0]).exists()
    assert command[1:] == ["dev", "-m", "rag_assets.definitions"]
    assert env["DAGSTER_HOME"] == str(project_env / "dagster")


def test_ui_hands_port_host_and_corpus_to_dagster_dev(project_env: Path, sample_corpus: Path,
                                                     monkeypatch: pytest.MonkeyPatch):
    """The command line the CLI would exec, without starting a server; dagster dev itself parses it (--help
    exits once every option is known, and fails on one it does not know)."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.delenv("RAG_ASSETS_CORPUS_ROOT")
    execs = []

    def execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        execs.append((argv, env))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", execve)
    with pytest.raises(SystemExit):
        main(["ui", "--port", "3111", "--host", "127.0.0.1", "--corpus", str(sample_corpus)])
    ((argv, env),) = execs
    assert argv[1:] == ["dev", "-m", "rag_assets.definitions", "--port", "3111", "--host", "127.0.0.1"]
    assert env["RAG_ASSETS_CORPUS_ROOT"] == str(sample_corpus) and env["DAGSTER_HOME"] == str(project_env / "dagster")
    parsed = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=120)
    assert parsed.returncode == 0, parsed.stderr


def test_verbose_names_the_files_the_snapshot_skipped_as_plain_text(
        project_env: Path, sample_corpus: Path, capsys: pytest.CaptureFixture[str]):
    """README: --verbose "prints every metadata field"; it printed scalars only, so the snapshot's ``skipped`` table
    never showed (``skipped_files=2`` named nothing). A file name is data: its escape character is shown, not sent."""
    (sample_corpus / "common" / "blob.md").write_bytes(b"\xff\xfe\x00 binary")
    (sample_corpus / "common" / "red\x1b[31m.md").write_bytes(b"\x89PNG\r\n")

    assert main(["run", "--no-review", "--no-production", "--verbose"]) == 0

    out = capsys.readouterr().out
    assert "skipped_files            2" in out
    after = out.split("\n  skipped\n", 1)[1].splitlines()
    block = after[:next(n for n, line in enumerate(after) if not line.startswith("    "))]
    assert block == ["    file | reason",
                     "    common/blob.md | not valid UTF-8 (invalid byte at offset 0)",
                     "    common/red\\x1b[31m.md | not valid UTF-8 (invalid byte at offset 0)"], out
    assert "\x1b" not in out


def test_a_review_that_rejects_every_candidate_says_so_and_names_the_quality_problem(
        unreviewed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """It said "The golden set is empty: review the candidates in .../outbox" though nothing was left to review, and
    the check line read "0 items, 1 problem(s)" without naming the problem."""
    version = unreviewed.split("nobody has reviewed corpus version ")[1].split(" ")[0]  # after `run --no-review`
    curation = Settings.from_env().curation_root
    sent = pd.read_csv(curation / "outbox" / f"review-{version}.csv", encoding="utf-8-sig", dtype=str,
                       keep_default_na=False)
    review = tmp_path / f"rejected-{version}.csv"
    sent.assign(decision="reject", reviewer="ana").to_csv(review, index=False)

    assert main(["run", "--no-production", "--review", str(review)]) == 1

    out = capsys.readouterr()
    assert (f"  FAILED golden_set.golden_set_quality [{version}]: golden set v-: 0 items, 1 problem(s): "
            "expect_table_row_count_to_be_between on the table failed (observed 0)\n") in out.out
    assert out.err.endswith(
        f"failed for corpus version {version}. Every candidate of corpus version {version} was rejected (50 of 50): "
        f"nothing to build the golden set from. Accept or edit some in a review file (the one applied is in "
        f"{curation / 'processed'}) and drop it in {curation / 'inbox'}, or `rag-assets import-golden FILE` a golden "
        "set you already have.\n"), out.err
    assert "review the candidates in" not in out.err
