"""Every bad input stops at the door: exit 2 and one line naming the setting or argument, its value and an
example of a good one, before a run starts or the store is made; no traceback, no warning on the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster.components.core.component_tree import ComponentTreeException

from rag_assets.cli import main
from rag_assets.cli.commands import domain_error
from rag_assets.errors import ConfigError

TEAM = "team.ragas.jsonl"  # a ragas test set that exists, in the test's folder
THRESHOLDS = "gates.yaml"  # a thresholds file with a minimum out of range
# (environment, arguments, the line's start); {tmp} is the test's folder, also the current one; an
# environment value of None unsets the variable.
BAD_INPUTS = [
    ({"RAG_ASSETS_MAX_COST_USD": "-1"}, ["run"],
     "RAG_ASSETS_MAX_COST_USD='-1' is not a number of US dollars >= 0; for example RAG_ASSETS_MAX_COST_USD=10"),
    ({"RAG_ASSETS_HOME": "/proc/forbidden"}, ["run"],
     "RAG_ASSETS_HOME='/proc/forbidden' is not a folder that can be made here (No such file or directory); "
     "for example RAG_ASSETS_HOME=~/.rag_assets"),
    ({"RAG_ASSETS_DATABASE_URL": "postgresql://u@127.0.0.1/db"}, ["run"],
     "RAG_ASSETS_DATABASE_URL='postgresql://u@127.0.0.1/db' is not usable here: its driver psycopg is not installed; "
     "for example RAG_ASSETS_DATABASE_URL=postgresql+psycopg2://"),
    ({}, ["import-golden", "missing.jsonl", "--format", "ragas"],
     "import-golden path 'missing.jsonl' is not an existing file; for example rag-assets import-golden "),
    ({"RAG_ASSETS_CORPUS_ROOT": None}, ["import-golden", TEAM, "--format", "ragas"],
     "corpus root {tmp}/data/corpus does not exist. Run rag-assets from the project folder (the one holding "
     "data/corpus), or pass --corpus DIR, or set RAG_ASSETS_CORPUS_ROOT; for example --corpus="),
    ({}, ["import-golden", TEAM, "--format", "ragas", "--corpus", "docs"],
     "--corpus='docs' is not an existing folder; for example --corpus=data/corpus"),
    ({"RAG_ASSETS_CORPUS_ROOT": "{tmp}/docs"}, ["simulate-review"],
     "RAG_ASSETS_CORPUS_ROOT='{tmp}/docs' is not an existing folder; for example RAG_ASSETS_CORPUS_ROOT="),
    ({}, ["ui", "--corpus", "docs"], "--corpus='docs' is not an existing folder"),
    ({}, ["import-golden", TEAM, "--format", "anthropic_docs"],
     "--chunks (the corpus chunks JSON) is needed for --format anthropic_docs; for example --chunks="),
    ({}, ["import-golden", TEAM, "--format", "anthropic_docs", "--chunks", "chunks.json"],
     "--chunks='chunks.json' is not an existing file; for example --chunks=anthropic_docs.json"),
    ({}, ["import-golden", "{tmp}/data.txt", "--format", "ragas"],
     "{tmp}/data.txt: unsupported ragas test-set format '.txt': use .csv or .jsonl"),
    ({}, ["export", "--format", "ragas", "--out", "g.ragas"],
     "--out='g.ragas' is not a .jsonl or .csv file for --format ragas; for example --out=golden.ragas.jsonl"),
    ({}, ["export", "--format", "ragas"], "no golden-set version in sqlite:///"),
    ({}, ["run", "--thresholds", "missing.yaml"],
     "--thresholds='missing.yaml' is not an existing file; for example --thresholds=gates.yaml"),
    ({}, ["run", "--thresholds", THRESHOLDS],
     f"--thresholds='{THRESHOLDS}': thresholds file {THRESHOLDS}, field faithfulness: expected a number in [0, 1], "
     "got 85"),
    ({}, ["run", "--system-url", "not-a-url"],
     "--system-url='not-a-url' is not an http(s) URL; for example --system-url=http://127.0.0.1:8000/answer"),
    ({}, ["run", "--system", "rag_assets.rag.error_budget:DEFAULT_MAX_ERROR_RATE"],
     "--system rag_assets.rag.error_budget:DEFAULT_MAX_ERROR_RATE: names a float, not a function, a LangChain chain "
     "or a LlamaIndex query engine (for example --system my_rag:answer)"),
    ({}, ["run", "--review", "reviewed.csv"], "--review='reviewed.csv' is not an existing file; for example --review="),
    ({}, ["calibrate", "labelled.jsonl"], "calibrate path 'labelled.jsonl' is not an existing file; for example "),
    ({}, ["corpus-from-json", "chunks.json", "out"], "corpus-from-json chunks_json 'chunks.json' is not an existing file"),
]


#: The metrics a thresholds file may name at the evaluation's k (5), as a refusal lists them.
KNOWN_METRICS = ("faithfulness, answer_relevance, context_precision, context_recall, citation_accuracy, "
                 "temporal_faithfulness, decline_accuracy, precision@5, recall@5, ndcg@5, mrr@5, hit_rate@5, "
                 "average_precision, doc_hit_rate@5, token_recall@5, token_precision@5, token_iou@5, diversity@5")
_GATES_NOTHING = "{file}: sets no metric, so it would gate nothing; for example 'faithfulness: 0.85'"
#: (file name, content, the problem every entry point names: the CLI, the API and the evaluation asset's config);
#: each used to be taken as it stood: no gate at all, the last of two minimums, or a run that failed at its end.
BAD_THRESHOLDS = [
    ("empty.yaml", "", _GATES_NOTHING),
    ("braces.yaml", "{}\n", _GATES_NOTHING),
    ("braces.json", "{}\n", _GATES_NOTHING),
    ("comments.yaml", "# faithfulness: 0.9\n", _GATES_NOTHING),
    ("twice.yaml", "faithfulness: 0.9\ncontext_recall: 0.7\nfaithfulness: 0.5\n",
     "{file}, line 3, field faithfulness: given twice (first on line 1); keep one"),
    ("twice.json", '{"faithfulness": 0.9,\n "faithfulness": 0.5}\n',
     "{file}, line 2, field faithfulness: given twice (first on line 1); keep one"),
    ("typo.yaml", "faithfullness: 0.99\n",
     "{file}, field faithfullness: not a metric (did you mean faithfulness?); the metrics at k=5: " + KNOWN_METRICS),
    ("capital.yaml", "Faithfulness: 0.9\n",
     "{file}, field Faithfulness: not a metric (did you mean faithfulness?); the metrics at k=5: " + KNOWN_METRICS),
    ("at10.yaml", "recall@10: 0.8\n",
     "{file}, field recall@10: not a metric (did you mean recall@5?); the metrics at k=5: " + KNOWN_METRICS),
    ("unlike.yaml", "speed: 0.8\n", "{file}, field speed: not a metric; the metrics at k=5: " + KNOWN_METRICS),
    ("above.yaml", "faithfulness: 1.5\n", "{file}, field faithfulness: expected a number in [0, 1], got 1.5"),
    ("yes.yaml", "faithfulness: yes\n", "{file}, field faithfulness: expected a number in [0, 1], got True"),
]


def _named(case: tuple) -> str:
    env, argv, _ = case
    return " ".join([*(f"{k}={v}" for k, v in env.items()), *argv])


@pytest.mark.parametrize(("env", "argv", "expected"), BAD_INPUTS, ids=[_named(case) for case in BAD_INPUTS])
def test_a_bad_input_stops_at_the_door_in_one_line(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        recwarn: pytest.WarningsRecorder, env: dict[str, str | None], argv: list[str], expected: str):
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    (folder / TEAM).write_text(json.dumps({"user_input": "Why?", "reference": "Because.",
                                           "reference_contexts": ["Because."]}) + "\n")
    (folder / THRESHOLDS).write_text("faithfulness: 85\n")
    (folder / "data.txt").write_text("user_input,reference\n")
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, value.format(tmp=folder))
    home = Path(os.environ["RAG_ASSETS_HOME"])

    code = main([arg.format(tmp=folder) for arg in argv])

    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert code == 2 and captured.err.startswith(f"error: {expected.format(tmp=folder)}"), shown
    assert len(shown.splitlines()) <= 3 and "Traceback" not in shown
    terminal = [w for w in recwarn if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    assert terminal == [], "a warning would add lines to the terminal"
    assert not (home / "dagster").exists(), "no Dagster instance, so no run"
    assert not (home / "rag_assets.db").exists(), "no store"
    assert not (project_env.parent / "curation" / "inbox").exists(), "no review file staged"


def test_the_console_script_prints_the_one_line_and_nothing_else(tmp_path: Path):
    """The installed command, as a user types it: no warning or traceback before or after the line."""
    script = Path(sys.executable).with_name("rag-assets")
    env = {**os.environ, "RAG_ASSETS_HOME": str(tmp_path / "home"), "RAG_ASSETS_MAX_COST_USD": "-1"}
    done = subprocess.run([str(script), "run"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: RAG_ASSETS_MAX_COST_USD='-1' is not a number of US dollars >= 0; "
                           "for example RAG_ASSETS_MAX_COST_USD=10\n")
    assert not (tmp_path / "home").exists()


def test_a_review_asking_what_its_candidates_cannot_take_stops_at_the_door_naming_file_sheet_row_and_field(
        project_env: Path, capsys: pytest.CaptureFixture[str]):
    """A tester's workbook accepted a re-review whose evidence vanished: it passed the door, and the import
    refused it after the run had started (exit 1, several lines, no sheet named)."""
    from rag_assets.settings import Settings
    from rag_assets.store.curation_repository import SqlCurationRepository
    from rag_assets.store.engine import get_engine
    from tests.curation.test_rejected_files_leave_the_store_unchanged import pending_review
    from tests.curation.test_workbook import _outbox_workbook, fill_workbook, save_vanished_candidate

    engine = get_engine(Settings.from_env().store_url)
    version, _ = pending_review(engine)  # the candidates a first run generates for the sample corpus
    gone = save_vanished_candidate(engine, version)
    path, candidates, _ = _outbox_workbook(engine, version, project_env.parent / f"review-{version}.xlsx")
    fill_workbook(path, {gone.candidate_id: {"D": "accept"}})
    row = 2 + [c.candidate_id for c in candidates].index(gone.candidate_id)

    assert main(["run", "--no-production", "--review", str(path)]) == 2
    refused = capsys.readouterr()
    assert refused.out == "" and refused.err == (
        f"error: {path}: sheet Review, row {row}, decision: candidate {gone.candidate_id} has no relevant chunk left "
        "in this corpus version (its evidence vanished); it can only be rejected; nothing staged or applied\n")
    inbox = Settings.from_env().curation_root / "inbox"
    assert not (inbox.is_dir() and list(inbox.iterdir())) and SqlCurationRepository(engine).decisions() == []


@pytest.mark.parametrize(("name", "content", "problem"), BAD_THRESHOLDS, ids=[case[0] for case in BAD_THRESHOLDS])
def test_a_thresholds_file_that_gates_nothing_or_names_a_metric_twice_or_wrongly_stops_at_the_door(
        project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        name: str, content: str, problem: str):
    """The tester's cases: an empty file ran every step and passed 13 checks with no gate (exit 0), where the
    default profile fails faithfulness; a metric given twice kept its last minimum; a misspelt one ran the whole
    lifecycle, then failed "below minimum: faithfullness - < 0.99" (exit 1)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    (tmp_path / name).write_text(content, encoding="utf-8")
    home = Path(os.environ["RAG_ASSETS_HOME"])

    code = main(["run", "--no-production", "--thresholds", name])

    shown = capsys.readouterr()
    line = problem.format(file=f"thresholds file {name}")
    assert (code, shown.out, shown.err) == (2, "", f"error: --thresholds='{name}': {line}\n")
    assert not (home / "dagster").exists(), "no Dagster instance, so no run"
    assert not (home / "rag_assets.db").exists(), "no store, so no evaluation in it"


def _raised_from(wrapper: Exception, cause: BaseException) -> Exception:
    """``wrapper`` as ``raise wrapper from cause`` leaves it."""
    wrapper.__cause__ = cause
    return wrapper


def test_only_dagsters_wrappers_are_unwrapped_to_the_projects_error_a_bug_raised_from_one_keeps_its_traceback():
    """A reviewer's case: any exception raised from a ConfigError exited 2 in one line, so a genuine bug (a
    RuntimeError raised ``from`` one) lost its traceback."""
    refused = ConfigError("k must be a whole number of at least 1, got 0; for example k: 5")
    assert domain_error(refused) is refused
    assert domain_error(_raised_from(ComponentTreeException(), refused)) is refused, "an instance's defs.yaml"
    resource = dg.DagsterResourceFunctionError("init", user_exception=refused,
                                               original_exc_info=(ConfigError, refused, None))
    assert domain_error(_raised_from(resource, refused)) is refused, "a resource"
    assert domain_error(_raised_from(RuntimeError("a bug"), refused)) is None
    assert domain_error(_raised_from(ComponentTreeException(), _raised_from(RuntimeError("a bug"), refused))) is None
