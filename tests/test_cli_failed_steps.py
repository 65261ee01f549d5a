"""What ``rag-assets run`` tells of a run that failed, on the terminal and in ``--summary-json``: the outcome, each
failed step with its asset and its one-line error (secrets blanked), the judge's first error when its failures fail
the budget; and the figures it shows, rounded once, as the store's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster_shared.error import SerializableErrorInfo

from rag_assets.app.status import key_figures
from rag_assets.cli import main
from rag_assets.cli.commands import summary_table
from rag_assets.cli.failures import error_line, run_secrets
from rag_assets.cli.summary import RunState, Shown
from rag_assets.settings import SQLITE_FILE_NAME
from rag_assets.store.engine import get_engine
from rag_assets.store.evaluation_repository import SqlEvaluationRepository
from tests.conftest import PROJECT_ROOT, SharedCheckout
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_judge import judge_responder

KEY = "placeholder-credential-0123456789"  # never printed, never in the summary
TEAM_RAG = '''
def answer(request: dict) -> dict:
    return {"answer": "The documentation says so.", "retrieved": [{"text": "The documentation says so, at length."}]}


def broken(request: dict) -> dict:
    raise RuntimeError("the index is not loaded")
'''


def _claude_run(tmp_path: Path, server: FakeAnthropicServer, *args: str,
                **env: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`rag-assets run` in a process of its own with Claude (the fake Messages API) configured: the code location
    reads the key when it is imported, so the run with a key cannot share this process. ``--no-review``: the first
    run applied the bundled simulated review already, and staging it again only re-validated that file (importing
    Great Expectations, seconds of the process's CPU) to find it applied; what these runs tell is the judge's."""
    team = tmp_path / "team"
    team.mkdir(exist_ok=True)
    (team / "team_rag.py").write_text(TEAM_RAG)
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", "run", "--no-production", "--no-review", *args,
         "--summary-json", str(summary)],
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "ANTHROPIC_API_KEY": KEY,
             "ANTHROPIC_BASE_URL": server.base_url, **env},
        cwd=team, capture_output=True, text=True, timeout=600)
    assert KEY not in done.stdout + done.stderr + summary.read_text()
    return done, json.loads(summary.read_text())


def test_a_run_the_llm_budget_stops_says_so_in_the_summary_json_and_on_the_terminal(
        first_cli_run: SharedCheckout, tmp_path: Path):
    with FakeAnthropicServer(judge_responder) as server:
        done, data = _claude_run(tmp_path, server, "--system", "team_rag:answer", RAG_ASSETS_MAX_COST_USD="0.01")
        assert server.count() == 0, "stopped before any request"
    assert done.returncode == 1, done.stderr
    assert data["ok"] is False
    (failed,) = data["failed_steps"]
    assert (failed["asset"], failed["step"]) == ("evaluation", "evaluation.judge_shard[shard_0000]")
    assert failed["error"].startswith("judge budget: the estimated cost $"), failed["error"]
    assert "exceeds its budget: $0.0100, of which $0.0000 is spent; nothing was sent." in failed["error"]
    assert "\n" not in failed["error"]
    assert f"\nstep {failed['step']} of asset evaluation failed: {failed['error']}\n" in done.stderr


def test_a_step_failed_without_any_budget_is_listed_the_same_way(first_cli_run: SharedCheckout, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]):
    team = tmp_path / "team"
    team.mkdir()
    (team / "team_rag_broken.py").write_text(TEAM_RAG)
    monkeypatch.chdir(team)
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))  # so sys.path, which the CLI extends, is restored after
    summary = tmp_path / "summary.json"
    assert main(["run", "--no-production", "--system", "team_rag_broken:broken", "--summary-json", str(summary)]) == 1
    err = capsys.readouterr().err
    data = json.loads(summary.read_text())
    assert data["ok"] is False
    (failed,) = data["failed_steps"]
    assert failed == {"run_id": failed["run_id"], "step": "rag_answers_rag_answers_error_budget", "asset": "rag_answers",
                      "error": "dagster._core.errors.DagsterAssetCheckFailedError: 1 blocking asset check failed with "
                               "ERROR severity: rag_answers: rag_answers_error_budget"}
    assert f"\nstep {failed['step']} of asset rag_answers failed: {failed['error']}\n" in err


def test_a_run_that_passed_says_ok_with_no_failed_step(first_cli_run: SharedCheckout):
    assert (first_cli_run.made.summary["ok"], first_cli_run.made.summary["failed_steps"]) == (True, [])


def test_a_judge_refused_on_every_call_is_named_with_its_first_error(first_cli_run: SharedCheckout, tmp_path: Path):
    with FakeAnthropicServer(judge_responder, fail_rate=1.0, fail_status=401) as server:
        done, data = _claude_run(tmp_path, server, "--system", "team_rag:answer")
        assert server.count(status=401) > 0
    assert done.returncode == 1, done.stderr
    budget = next(c for c in data["checks"] if c["check"] == "judge_failure_budget")
    assert not budget["passed"] and "items (100.0%) not judged; budget 5%" in budget["description"]
    first = budget["description"].split("; first error: ", 1)[1]
    assert "Anthropic API error 401" in first, first
    assert f"FAILED evaluation.judge_failure_budget [{budget['partition']}]: {budget['description']}" in done.stdout
    assert data["ok"] is False and {f["asset"] for f in data["failed_steps"]} == {"evaluation"}


def test_the_summary_shows_each_figure_as_the_store_holds_it_rounded_once(first_cli_run: SharedCheckout,
                                                                           capsys: pytest.CaptureFixture[str]):
    (version, evaluation), = first_cli_run.made.summary["assets"]["evaluation"].items()
    engine = get_engine(f"sqlite:///{first_cli_run.home / SQLITE_FILE_NAME}")
    stored = key_figures(SqlEvaluationRepository(engine).get(evaluation["evaluation_id"]))
    assert stored and {metric: evaluation[metric] for metric in stored} == stored, "the store's figures, unrounded"
    assert main(["run", "--no-production"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("evaluation "))
    assert all(f"{metric}={value:.3f}" in line for metric, value in stored.items()), line


def test_the_table_rounds_a_figure_once():
    """0.72449 is 0.724 (the gate's, the report's and the store's figure), not 0.7245 rounded again to 0.725."""
    shown = Shown("run-1", False, materialization=dg.AssetMaterialization(
        "evaluation", partition="cv-1", metadata={"answer_relevance": dg.MetadataValue.float(0.72449)}))
    assert "answer_relevance=0.724" in summary_table(RunState([shown], []))


def test_the_ab_comparisons_line_shows_its_failed_answers_and_judge_calls():
    """As a production day's line shows its judge_failures: a comparison its failures left undecided says so in
    the table, not only in its metadata."""
    shown = Shown("run-1", False, materialization=dg.AssetMaterialization("ab_comparison", partition="cv-1", metadata={
        "recommendation": "REVIEW", "current": "reference-k5", "candidate": "reference-k3",
        "delta_faithfulness": dg.MetadataValue.float(0.005), "delta_recall@5": dg.MetadataValue.float(-0.036),
        "errors": dg.MetadataValue.int(2), "judge_failures": dg.MetadataValue.int(3)}))
    assert summary_table(RunState([shown], [])).splitlines()[2].endswith(
        "recommendation=REVIEW, current=reference-k5, candidate=reference-k3, delta_faithfulness=0.005, "
        "delta_recall@5=-0.036, errors=2, judge_failures=3")


def test_a_step_error_is_one_line_with_the_runs_secrets_blanked():
    secrets = run_secrets({"resources": {"rag": {"config": {"headers": {"Authorization": "Bearer ${TEAM_TOKEN}"}}}}},
                          {"ANTHROPIC_API_KEY": KEY, "TEAM_TOKEN": "Bearer team-token-4411",
                           "RAG_ASSETS_DATABASE_URL": "postgresql+psycopg2://ana:pg-pass-9876@db/rag"})
    cause = SerializableErrorInfo(f"RuntimeError: refused {KEY}\nwith team-token-4411 and pg-pass-9876\n", [],
                                  "RuntimeError")
    wrapper = SerializableErrorInfo("Error occurred while executing op", [], "DagsterExecutionStepExecutionError",
                                    cause)
    assert error_line(wrapper, secrets) == "RuntimeError: refused *** with *** and ***"
