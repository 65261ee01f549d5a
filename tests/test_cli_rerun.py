"""A second ``rag-assets run`` on an unchanged home runs nothing; a new review file or a changed corpus re-runs
what depends on it, and only that."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import re
from pathlib import Path

import dagster as dg
import pytest
from sqlalchemy import func, select

from rag_assets.cli import main
from rag_assets.defs.assets.production import production_code_version
from rag_assets.defs.freshness import already_scored, stale_selection
from rag_assets.defs.graph import build_definitions
from rag_assets.defs.jobs import build_lifecycle_job
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.resources import RESOURCES
from rag_assets.store.tables import (CandidateRow, EvaluationRow, GoldenVersionRow, LLMCacheRow, ProductionRunRow,
                                     RagRunRow)
from tests.conftest import SharedCheckout
from tests.test_cli import checkout_curation  # noqa: F401  (a fixture)

COUNTED = (LLMCacheRow, CandidateRow, GoldenVersionRow, RagRunRow, EvaluationRow, ProductionRunRow)


def _rows() -> dict[str, int]:
    """Rows of the tables a run writes to when it generates, judges, answers or scores anything."""
    with RESOURCES["store"].engine().connect() as conn:
        return {row.__tablename__: conn.execute(select(func.count()).select_from(row.__table__)).scalar_one()
                for row in COUNTED}


def _runs(project_env: Path) -> int:
    with dg.DagsterInstance.from_config(str(project_env / "dagster")) as instance:
        return len(instance.get_runs())


def _table(out: str) -> list[str]:
    """The rows of the summary table (one per asset partition shown)."""
    _, rule, rest = out.partition("-" * 100 + "\n")
    return rest.split("\n\n", 1)[0].splitlines() if rule else []


def _materialized(out: str) -> list[str]:
    """The assets this run materialized, sorted: the table's rows not marked as an earlier run's results."""
    return sorted(line.split()[0] for line in _table(out) if "(earlier run " not in line)


@dataclasses.dataclass(frozen=True)
class FirstRun:
    """A home after a first run: the run's output and the checkout's folders."""
    out: str
    home: Path
    corpus: Path
    curation: Path


@pytest.fixture(scope="module")
def first_run_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """A first run on a new home (the bundled review applied, 7 production days scored), made once per module."""
    def run(home: Path) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["run"]) == 0
        return out.getvalue()

    # DAGSTER_HOME empty: the CLI's own instance in the home
    return SharedCheckout(tmp_path_factory.mktemp("first-run"), run, dagster_home="")


@pytest.fixture
def first_run(first_run_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> FirstRun:
    """The home as the first run left it, whatever an earlier test did to it; the environment points at it."""
    checkout = first_run_checkout
    return FirstRun(checkout.made, checkout.use(monkeypatch), checkout.corpus, checkout.curation)


def _pending(out: str) -> int:
    """The candidates waiting for review, as the summary table's curation_queue row counts them."""
    (queue,) = [line for line in _table(out) if line.startswith("curation_queue")]
    return int(re.search(r"pending=(\d+)", queue).group(1))


def test_a_second_run_on_an_unchanged_home_writes_nothing_says_so_and_counts_the_candidates_waiting_as_status_does(
        first_run: FirstRun, capsys: pytest.CaptureFixture[str]):
    """The second run materializes nothing and shows the first run's results as still holding. Its summary counts
    the candidates waiting as status does: the production days queue coverage gaps as candidates (1 on 2026-11-20, 2
    on 2026-11-21) after the review queue was recorded, and rewrite the review file with them: 3 wait for the
    experts, in the store and in the file. The run's summary (table and JSON) and ``rag-assets status`` both say 3;
    the summary said pending=0."""
    home = first_run.home
    assert main(["status"]) == 0
    waiting = re.search(r"\n  (\d+) candidate questions of (cv-[0-9a-f]+) wait for a review decision",
                        capsys.readouterr().out)
    assert waiting is not None and int(waiting.group(1)) == 3 == _pending(first_run.out)
    with (first_run.curation / "outbox" / f"review-{waiting.group(2)}.csv").open(encoding="utf-8-sig") as review:
        assert len(list(csv.DictReader(review))) == 3

    before, runs = _rows(), _runs(home)
    assert runs == 8 and before[EvaluationRow.__tablename__] == 1 and before[ProductionRunRow.__tablename__] == 7
    summary = home / "summary.json"
    assert main(["run", "--summary-json", str(summary)]) == 0
    out = capsys.readouterr().out
    assert "review file" in out and "applied already" in out, "the applied bundled review is not staged again"
    assert "every asset is up to date (same code versions, same input data versions, no review file waiting)" in out
    assert "(7 scored already on the same records)" in out
    assert "\nnothing to run for corpus version cv-" in out and "production days scored" not in out
    assert _materialized(out) == []
    shown = _table(out)
    assert [line.split()[0] for line in shown] == [line.split()[0] for line in _table(first_run.out)]
    assert all(re.search(r"\(earlier run [0-9a-f]{8}\)$", line) for line in shown)
    assert [line.rsplit("  (earlier run ", 1)[0] for line in shown] == _table(first_run.out), "the first run's figures"
    assert "checks: 47 passed, 2 failed" in out, "the first run's check results still hold and are shown"
    assert "FAILED production_sample.drift_faithfulness [2026-11-26]: DRIFT faithfulness:" in out
    assert "report: " in out, "the report that still holds is named"
    assert _pending(out) == 3
    data = json.loads(summary.read_text(encoding="utf-8"))
    assert data["assets"]["curation_queue"][waiting.group(2)]["pending"] == 3
    assert len(data["checks"]) == 49 and sum(not c["passed"] for c in data["checks"]) == 2
    assert set(data["earlier_runs"]) == set(data["assets"]) and data["assets"]["evaluation"]
    assert (_rows(), _runs(home)) == (before, runs), "no LLM call, candidate, answer, score or Dagster run"

    assert main(["status"]) == 0
    status = capsys.readouterr().out.splitlines()
    ((version, evaluation),) = data["assets"]["evaluation"].items()
    assert status[0].startswith("store: sqlite:///") and status[1] == "corpus versions (1):"
    assert status[2].startswith(f"  {version}  ") and "  49 documents, 309 chunks  " in status[2]
    assert status[3:5] == ["golden versions (1):", f"  v1  {version}  48 items"]
    assert status[5] == "evaluations (newest 1):" and f"  {version}  golden v1  reference  passed  " in status[6]
    assert f"faithfulness={evaluation['faithfulness']:.3f}" in status[6]
    pending = sum(first["queued_candidates"] for first in data["assets"]["production_sample"].values())
    assert status[7:] == ["waiting:", f"  {pending} candidate questions of {version} wait for a review decision "
                          "(undecided, or reviewers disagree) "
                          f"(review file: {home.parent / 'curation' / 'outbox' / f'review-{version}.csv'})"], \
        "the bundled review was applied; what production traffic queued since waits"

    # the same home under another judge (a key set, another judge model, new offline heuristics) or another evidence
    # overlap: what the judge scored is stale, in Dagster's account and for the production days, and nothing
    # upstream of it is; under another model answering for the reference system, its answers and what scores them
    instance_home = str(home / "dagster")
    other = dataclasses.replace(BUNDLED, judge="anthropic:claude-another")
    overlap = dataclasses.replace(BUNDLED, evidence_min_overlap=0.9)
    answering = dataclasses.replace(BUNDLED, generator="anthropic:claude-another")
    sample_key, logs = BUNDLED.key("production_sample"), RESOURCES["production_logs"].folder()
    with dg.DagsterInstance.from_config(instance_home) as instance:
        for lifecycle, stale, scored in ((BUNDLED, [], 7),
                                         (other, ["ab_comparison", "evaluation", "judge_calibration", "judge_probes"], 0),
                                         (overlap, ["ab_comparison", "evaluation", "judge_calibration", "judge_probes"], 7),
                                         (answering, ["ab_comparison", "evaluation", "judge_calibration", "judge_probes",
                                                      "rag_answers"], 7)):
            defs = build_definitions(lifecycle, RESOURCES)
            keys = stale_selection(instance, defs, build_lifecycle_job(lifecycle).selection, version)
            assert [key.to_user_string() for key in keys] == stale, lifecycle.judge
            days = [p for p in defs.resolve_assets_def(sample_key).partitions_def.get_partition_keys()
                    if p in first_run.out]
            assert len(already_scored(instance, sample_key, production_code_version(lifecycle), logs, days)) == scored


def test_a_bad_review_file_is_refused_at_the_door_and_a_new_one_reruns_the_decisions_and_what_depends_on_them(
        first_run: FirstRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    curation = first_run.curation
    (sample,) = (curation / "sample").glob("review-cv-*.csv")
    with sample.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    accepted = next(row for row in rows if row["decision"] == "accept")
    fields = [c for c in rows[0] if c != "rows_written"]
    typo = tmp_path / sample.name.replace("review-", "typo-review-")
    with typo.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows([{**rows[0], "decision": "reject"}, {**rows[1], "decision": "acept"}])
    before = _rows()
    # a tester's file: a typo in one decision was rejected by the import after the run had started (exit 1, several
    # lines); it is refused at the door now, in one line naming file, row and field, exit 2, nothing staged
    assert main(["run", "--review", str(typo)]) == 2
    refused = capsys.readouterr()
    assert refused.out == "" and refused.err == (
        f"error: {typo}: row 3, decision: unknown decision 'acept'; use accept, reject or edit; nothing staged or "
        "applied\n")
    assert not list((curation / "inbox").glob("typo-review-*")) and _rows() == before
    review = tmp_path / sample.name.replace("review-", "second-review-")
    with review.open("w", encoding="utf-8", newline="") as handle:
        # as an expert would write it: without the writer's rows_written count (of the bundled file's rows)
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerow({**accepted, "decision": "reject", "notes": "wrong after all"})
    assert main(["run", "--review", str(review), "--verbose"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\bnew_version +True\b", out), "the golden set got a new version"
    assert _materialized(out) == ["ab_comparison", "curated_decisions", "curation_queue", "evaluation", "golden_set",
                                  "judge_calibration", "judge_probes", "rag_answers"], \
        "neither the snapshot nor the candidates; no production day"
    earlier = sorted(line.split()[0] for line in _table(out) if "(earlier run " in line)
    assert earlier == ["corpus_snapshot", *["production_sample"] * 7, "question_candidates"], "shown as still holding"
    assert "files_applied=1" in out and "items=47, added=0, removed=1" in out
    after = _rows()
    assert [after[t] - before[t] for t in before] == [0, 0, 1, 1, 1, 0], dict(zip(before, after.values()))


def test_a_changed_corpus_runs_the_whole_chain_for_its_new_version(
        first_run: FirstRun, capsys: pytest.CaptureFixture[str]):
    version = first_run.out.split("succeeded for corpus version ")[1].split(";")[0]
    page = sorted(first_run.corpus.rglob("*.md"))[0]
    page.write_text(page.read_text(encoding="utf-8") + "\n\nA new paragraph about offline mode.\n", encoding="utf-8")
    main(["run", "--no-review"])
    out = capsys.readouterr().out
    assert {"corpus_snapshot", "question_candidates"} <= set(_materialized(out))
    snapshot = next(line for line in out.splitlines() if line.startswith("corpus_snapshot"))
    assert version not in snapshot and "documents_changed=1" in snapshot


def test_a_new_store_under_an_instance_that_ran_before_runs_everything(
        first_run: FirstRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("DAGSTER_HOME", str(first_run.home / "dagster"))
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "another-home"))
    assert main(["run", "--no-production"]) == 0
    out = capsys.readouterr().out
    assert _materialized(out) == sorted(["corpus_snapshot", "question_candidates", "curation_queue",
                                         "curated_decisions", "golden_set", "ab_comparison", "rag_answers",
                                         "evaluation", "judge_probes", "judge_calibration"])
    assert "items=48, added=48" in out, "the instance's records say fresh, but this store had nothing"


def test_a_failed_gate_still_fails_a_rerun_that_finds_the_evaluation_up_to_date(
        project_env: Path, checkout_curation: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        capsys: pytest.CaptureFixture[str]):
    """The usual CI retry: the same run again, nothing changed. The evaluation is up to date and its failed
    threshold check is an earlier run's result that still holds, so the gate fails again: exit 1 every time."""
    monkeypatch.setenv("DAGSTER_HOME", "")
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps({"context_precision": 1.0}), encoding="utf-8")
    first_json = tmp_path / "first.json"
    assert main(["run", "--no-production", "--thresholds", str(strict), "--summary-json", str(first_json)]) == 1
    first = capsys.readouterr()
    assert "FAILED evaluation.evaluation_thresholds [cv-" in first.out
    agreement = [c for c in json.loads(first_json.read_text(encoding="utf-8"))["checks"] if c["check"] == "judge_agreement"]
    assert [(c["passed"], c["description"].split(":")[0]) for c in agreement] == [(True, "not applicable")], \
        "checked after the evaluation although its failed gate stopped the lifecycle run there"
    summary = project_env / "summary.json"
    for attempt in range(2):  # the first retry runs what the failed step held back; the second finds nothing to do
        assert main(["run", "--no-production", "--summary-json", str(summary)]) == 1, attempt
        out, err = capsys.readouterr()
        failed = re.search(r"  FAILED evaluation\.evaluation_thresholds \[cv-\S+\]: .*\(earlier run ([0-9a-f]{8})\)$",
                           out, re.MULTILINE)
        assert failed, out
        assert re.search(r"\n1 gate failed and still stands for corpus version cv-\S+: "
                         rf"evaluation\.evaluation_thresholds \[cv-\S+\] of earlier run {failed[1]}\. ", err), err
        assert "succeeded for corpus version" not in out and "nothing to run for corpus version" not in out
        data = json.loads(summary.read_text(encoding="utf-8"))
        assert [c["check"] for c in data["checks"] if not c["passed"]] == ["evaluation_thresholds"]
    assert "every asset is up to date" in out and _materialized(out) == []
