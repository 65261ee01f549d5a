"""``rag-assets run --system / --system-url / --system-header / --summary-json`` on the sample corpus."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.cli import main
from rag_assets.cli.system import header_templates, system_run_config
from rag_assets.errors import ConfigError
from tests.conftest import PROJECT_ROOT, SharedCheckout
from tests.fakes.rag_http import FakeRagHttpServer


def test_a_callable_in_the_current_directory_is_scored_and_the_summary_json_says_so(
        first_cli_run: SharedCheckout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    team = tmp_path / "team"
    team.mkdir()
    shutil.copyfile(PROJECT_ROOT / "tests" / "rag" / "own_chunking_system.py", team / "team_rag.py")
    monkeypatch.chdir(team)
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))  # so sys.path, which the CLI extends, is restored after
    monkeypatch.setenv("PYTHONPATH", "")
    monkeypatch.setenv("OWN_RAG_DOCS", str(first_cli_run.corpus))
    summary = tmp_path / "out" / "summary.json"
    code = main(["run", "--no-production", "--system", "team_rag:windows", "--summary-json", str(summary)])
    out = capsys.readouterr().out
    data = json.loads(summary.read_text())
    (version, rag), = data["assets"]["rag_answers"].items()
    assert (rag["system"], rag["items"], rag["answered"], rag["errors"]) == ("team_rag:windows", 48, 48, 0)
    assert 0 <= rag["contexts_unmapped_share"] <= 0.10 and set(rag["context_mapping"]) <= {"exact", "normalised", "fuzzy", "part", "unmapped"}
    evaluation = data["assets"]["evaluation"][version]
    assert evaluation["contexts_unmapped_share"] <= 0.10 and 0 < evaluation["recall@5"] <= 1
    checks = {(c["asset"], c["check"]): c for c in data["checks"]}
    assert checks[("rag_answers", "rag_answers_error_budget")]["passed"]
    assert checks[("rag_answers", "rag_answers_error_budget")]["description"].startswith("0 of 48 items errored")
    assert all(c["partition"] == (None if c["asset"] == "judge_calibration" else version) for c in data["checks"])
    assert checks[("judge_calibration", "judge_agreement")]["passed"], "checked after the evaluation: no verdicts yet"
    failed = sorted(name for (_, name), c in checks.items() if not c["passed"])
    assert code == (1 if failed else 0) and f"checks: {len(checks) - len(failed)} passed, {len(failed)} failed" in out


TEAM_CITES = """
import os

from team_rag import windows


def cited(request):
    response = windows(request)
    response["citations"] = [{"claim": response["answer"], "chunk_id": response["retrieved"][0]["id"]}]
    return response


def ghost(request):
    response = cited(request)
    if request["item_id"] == os.environ["GHOST_ITEM"]:
        response["citations"].append({"claim": response["answer"], "chunk_id": "bee-queen-99"})
    return response
"""


def _item_values(evaluation_id: str) -> dict[tuple[str, str], float]:
    from rag_assets.defs.resources import RESOURCES

    stored, _ = RESOURCES["store"].evaluations().item_values(evaluation_id)
    return {(item_id, metric): value for (item_id, _), values in stored.items() for metric, value in values.items()}


def test_a_citation_of_an_id_the_system_never_returned_lowers_citation_accuracy_and_errs_on_nothing(
        first_cli_run: SharedCheckout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        forget_module: Callable[[str], None]):
    """A tester's case: a team's own system, citing on one item an id it never returned and that does not exist,
    failed the run: the item became an unknown_chunks error, scored at every metric's worst. By docs/metrics.md
    it is a fabricated citation: that item's citation accuracy halves (one right citation of two), and every
    other figure is the same system's without it."""
    team = tmp_path / "team"
    team.mkdir()
    forget_module("team_rag")
    forget_module("team_cites")
    shutil.copyfile(PROJECT_ROOT / "tests" / "rag" / "own_chunking_system.py", team / "team_rag.py")
    (team / "team_cites.py").write_text(TEAM_CITES)
    monkeypatch.chdir(team)
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PYTHONPATH", "")
    monkeypatch.setenv("OWN_RAG_DOCS", str(first_cli_run.corpus))
    summaries = {name: tmp_path / "out" / f"{name}.json" for name in ("cited", "ghost")}
    main(["run", "--no-production", "--system", "team_cites:cited", "--summary-json", str(summaries["cited"])])
    clean = json.loads(summaries["cited"].read_text())
    (version, evaluation), = clean["assets"]["evaluation"].items()
    before = _item_values(evaluation["evaluation_id"])
    ghost_item = min(item for (item, metric), value in before.items()
                     if metric == "citation_accuracy" and value == 1.0 and before.get((item, "hit_rate@5")) == 1.0)
    monkeypatch.setenv("GHOST_ITEM", ghost_item)
    main(["run", "--no-production", "--system", "team_cites:ghost", "--summary-json", str(summaries["ghost"])])
    data = json.loads(summaries["ghost"].read_text())
    rag, ghosted = data["assets"]["rag_answers"][version], data["assets"]["evaluation"][version]
    assert (rag["system"], rag["items"], rag["answered"], rag["errors"]) == ("team_cites:ghost", 48, 48, 0)
    budget = next(c for c in data["checks"] if c["check"] == "rag_answers_error_budget")
    assert budget["passed"] and budget["description"].startswith("0 of 48 items errored (0.0%")
    after = _item_values(ghosted["evaluation_id"])
    assert (after[(ghost_item, "citation_accuracy")], after[(ghost_item, "hit_rate@5")]) == (0.5, 1.0)
    assert after[(ghost_item, "faithfulness")] == before[(ghost_item, "faithfulness")]
    assert {key: value for key, value in after.items() if key != (ghost_item, "citation_accuracy")} == {
        key: value for key, value in before.items() if key != (ghost_item, "citation_accuracy")}
    cited_items = sum(1 for _, metric in before if metric == "citation_accuracy")
    assert ghosted["citation_accuracy"] == pytest.approx(evaluation["citation_accuracy"] - 0.5 / cited_items, abs=1e-4)
    assert (evaluation["citations_fabricated"], ghosted["citations_fabricated"]) == (0, 1)


TEAM_CHAIN = """
import os
from operator import itemgetter
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough


class Paragraphs(BaseRetriever):
    documents: list[Document]

    def _get_relevant_documents(self, query, *, run_manager):
        words = set(query.lower().split())
        return sorted(self.documents, key=lambda d: -len(words & set(d.page_content.lower().split())))[:5]


def build_chain():
    root = Path(os.environ["OWN_RAG_DOCS"])
    documents = [Document(page_content=part.strip(), metadata={"source": str(path)})
                 for path in sorted(root.rglob("*.*")) for part in path.read_text().split("\\n\\n") if part.strip()]
    prompt = ChatPromptTemplate.from_template("Answer from the context.\\n{context}\\nQuestion: {input}")
    stuff = RunnablePassthrough.assign(context=lambda x: "\\n\\n".join(d.page_content for d in x["context"]))
    model = FakeListChatModel(responses=["The documentation answers this."])
    return RunnablePassthrough.assign(context=itemgetter("input") | Paragraphs(documents=documents)).assign(
        answer=stuff | prompt | model)
"""


def test_a_function_that_builds_a_langchain_chain_answers_every_item(
        first_cli_run: SharedCheckout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        forget_module: Callable[[str], None]):
    team = tmp_path / "team"
    team.mkdir()
    forget_module("team_chain")
    (team / "team_chain.py").write_text(TEAM_CHAIN)
    monkeypatch.chdir(team)
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PYTHONPATH", "")
    monkeypatch.setenv("OWN_RAG_DOCS", str(first_cli_run.corpus))
    summary = tmp_path / "out" / "summary.json"
    main(["run", "--no-production", "--system", "team_chain:build_chain", "--summary-json", str(summary)])
    (rag,) = json.loads(summary.read_text())["assets"]["rag_answers"].values()
    assert (rag["system"], rag["items"], rag["answered"], rag["errors"]) == ("team_chain:build_chain", 48, 48, 0)
    assert rag["contexts_unmapped_share"] <= 0.10


def test_an_unreachable_endpoint_errs_on_every_item_and_the_error_budget_stops_the_run(
        first_cli_run: SharedCheckout, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    summary = tmp_path / "summary.json"
    code = main(["run", "--no-production", "--system-url", "http://127.0.0.1:9/rag", "--summary-json", str(summary)])
    out, err = capsys.readouterr()
    data = json.loads(summary.read_text())
    assert code == 1 and "evaluation" not in data["assets"]
    assert "failed for corpus version" in err and "review the candidates" not in err, "the golden set is not empty"
    (rag,) = data["assets"]["rag_answers"].values()
    assert (rag["system"], rag["answered"], rag["errors"]) == ("http://127.0.0.1:9/rag", 0, 48)
    budget = next(c for c in data["checks"] if c["check"] == "rag_answers_error_budget")
    assert not budget["passed"]
    assert budget["description"].startswith("48 of 48 items errored (100.0%, budget 5.0%); http_error x48, e.g. ")
    assert "FAILED rag_answers.rag_answers_error_budget [" in out


def test_after_a_passing_run_a_run_whose_system_fails_shows_no_earlier_evaluation_or_its_checks_and_no_secret(
        first_cli_run: SharedCheckout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    """The failing system is one that refuses half the items, echoing every form of the header secrets it was sent
    (a tester's server): no form reaches the terminal, the store, the log, Dagster's storage or the summary."""
    token, key = "s3cr3t-TOKEN-98765", "K-team-4411-key"
    monkeypatch.setenv("TEAM_TOKEN", f"Bearer {token}")
    monkeypatch.setenv("TEAM_KEY", key)
    second = tmp_path / "second.json"
    _, first = first_cli_run.made  # the passing run: `rag-assets run --no-production`
    assert first["ok"] and "evaluation" in first["assets"]
    with FakeRagHttpServer() as server:
        code = main(["run", "--no-production", "--system-url", f"{server.base_url}/echo-headers",
                     "--system-header", "Authorization=TEAM_TOKEN", "--system-header", "X-Api-Key=TEAM_KEY",
                     "--summary-json", str(second)])
    out, err = capsys.readouterr()
    data = json.loads(second.read_text())
    assert code == 1 and "evaluation" not in data["assets"] and "evaluation" not in data["earlier_runs"]
    assert not [c for c in data["checks"] if c["asset"] == "evaluation"]
    budget = next(c for c in data["checks"] if c["check"] == "rag_answers_error_budget")
    assert not budget["passed"] and "rag_answers" not in data["earlier_runs"]
    assert data["assets"]["corpus_snapshot"] and "corpus_snapshot" in data["earlier_runs"]  # what still holds
    assert "(earlier run " not in "".join(line for line in out.splitlines() if line.startswith("evaluation"))
    assert "http_error x" in budget["description"]
    assert "HTTP 401: bad token *** for user; X-Api-Key=*** raw=***" in budget["description"]
    assert (first_cli_run.home / "logs" / "rag-assets.log").is_file()
    assert _files_holding(first_cli_run.live, token, key) == [] and _files_holding(tmp_path, token, key) == []
    assert token not in out + err and key not in out + err


def test_a_basic_password_of_letters_only_a_server_quotes_in_its_answers_reaches_no_output_file_or_metadata(
        first_cli_run: SharedCheckout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    """A passphrase is all letters, like a word, yet the server quoting it in a 200 answer must not put it in the
    terminal, the summary, the store, the log or Dagster's run storage and metadata: the answers keep a ``***``."""
    password = "correcthorsebattery"
    monkeypatch.setenv("OWN_RAG_DOCS", str(first_cli_run.corpus))
    monkeypatch.setenv("TEAM_BASIC", "Basic " + base64.b64encode(f"alice:{password}".encode()).decode())
    summary = tmp_path / "summary.json"
    with FakeRagHttpServer() as server:
        code = main(["run", "--no-production", "--system-url", f"{server.base_url}/echo-password",
                     "--system-header", "Authorization=TEAM_BASIC", "--summary-json", str(summary)])
    out, err = capsys.readouterr()
    (rag,) = json.loads(summary.read_text())["assets"]["rag_answers"].values()
    assert code in (0, 1) and (rag["answered"], rag["errors"]) == (48, 0)  # 1: a score below the offline profile
    assert password not in out + err
    assert _files_holding(first_cli_run.live, password) == [] and _files_holding(tmp_path, password) == []
    with dg.DagsterInstance.from_config(str(first_cli_run.home / "dagster")) as instance:
        logged = [str(event) for run in instance.get_runs() for event in instance.all_logs(run.run_id)]
    assert any("rag_answers" in event for event in logged) and not [event for event in logged if password in event]
    assert _files_holding(first_cli_run.live, "(you signed in with ***)"), (
        "the answers were stored with the password blanked")


def test_header_values_come_from_the_environment_and_only_their_names_reach_the_run_config():
    environ = {"TEAM_RAG_TOKEN": "Bearer s3cret-value"}
    assert header_templates(["Authorization=TEAM_RAG_TOKEN"], environ) == {"Authorization": "${TEAM_RAG_TOKEN}"}
    config = system_run_config(None, "http://127.0.0.1:8000/rag", ["Authorization=TEAM_RAG_TOKEN"], environ)
    assert config == {"resources": {"rag": {"config": {
        "kind": "http", "target": "http://127.0.0.1:8000/rag", "headers": {"Authorization": "${TEAM_RAG_TOKEN}"}}}}}
    assert "s3cret" not in json.dumps(config)
    assert system_run_config(None, None) == {}


@pytest.mark.parametrize("target, url, headers, message", [
    (None, "http://h/rag", ["Authorization: Bearer abc"], "--system-header 'Authorization: Bearer abc': expected NAME=ENVVAR"),
    (None, "http://h/rag", ["Authorization=NOT_SET_ANYWHERE"], "--system-header Authorization: environment variable "
                                                                "NOT_SET_ANYWHERE is not set"),
    (None, None, ["X-Key=HOME"], "--system-header needs --system-url"),
    ("a:b", "http://h/rag", [], "give --system or --system-url, not both"),
    ("no_such_team_module:answer", None, [], "cannot load RAG system 'no_such_team_module:answer'"),
])
def test_bad_system_flags_are_config_errors(target, url, headers, message):
    with pytest.raises(ConfigError) as raised:
        system_run_config(target, url, headers, {"HOME": "/root"})
    assert str(raised.value).startswith(message)


def test_the_cli_exits_2_on_bad_system_flags_without_printing_a_secret(
        project_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("TEAM_RAG_TOKEN", "Bearer s3cret-value")
    assert main(["run", "--system-url", "http://127.0.0.1:9/rag", "--system-header", "Authorization=TEAM_RAG_TOKEN",
                 "--system-header", "X-Team=MISSING_TEAM_VAR"]) == 2
    captured = capsys.readouterr()
    assert "environment variable MISSING_TEAM_VAR is not set" in captured.err
    assert "s3cret" not in captured.out + captured.err
    assert main(["run", "--system", "no_such_team_module:answer"]) == 2
    assert "cannot load RAG system 'no_such_team_module:answer'" in capsys.readouterr().err


PASSWORD, API_KEY = "PW-s3cr3t-7f3a", "K-s3cr3t-91bd"
CREDENTIAL_URL = f"http://svc:{PASSWORD}@127.0.0.1:9/rag?api_key={API_KEY}"


def _files_holding(root: Path, *secrets: str) -> list[str]:
    """Every file under ``root`` (the store's SQLite file, reports, DAGSTER_HOME's run and event storage) whose
    bytes hold one of ``secrets``."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()
                  and any(secret.encode() in path.read_bytes() for secret in secrets))


def test_a_system_url_holding_a_credential_is_refused_in_one_line_and_stored_nowhere(
        checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    code = main(["run", "--no-production", "--system-url", CREDENTIAL_URL, "--summary-json", str(tmp_path / "s.json")])
    out, err = capsys.readouterr()
    assert _files_holding(tmp_path, PASSWORD, API_KEY) == []
    assert PASSWORD not in out + err and API_KEY not in out + err
    assert code == 2 and err == (
        "error: --system-url: the URL holds a credential (user:password before the host), which would be stored and "
        "shown with the run; pass the secret as a header from an environment variable instead: "
        "--system-header Authorization=VARIABLE (sends $VARIABLE's value)\n")


@pytest.mark.parametrize(("url", "found"), [
    (f"http://svc:{PASSWORD}@127.0.0.1:9/rag", "user:password before the host"),
    (f"https://{API_KEY}@rag.example/answer", "a user name before the host"),
    (f"https://rag.example/answer?tenant=a&api_key={API_KEY}&Access_Token=x", "query parameter Access_Token, api_key"),
])
def test_every_way_to_configure_an_http_system_refuses_a_credential_in_its_url(url: str, found: str):
    from rag_assets.defs.resources import RagSystemResource
    from rag_assets.rag.adapters import HttpRagSystem
    from rag_assets.rag.factory import check_system_spec

    headers = "headers: {Authorization: 'Bearer ${VARIABLE}'}"
    ways = {"target": lambda: HttpRagSystem(url), "target ": lambda: check_system_spec("http", url),
            "rag resource target": lambda: RagSystemResource(kind="http", target=url),
            "--system-url": lambda: system_run_config(None, url, ["Authorization=HOME"])}
    for setting, configure in ways.items():
        with pytest.raises(ConfigError) as refused:
            configure()
        message = str(refused.value)
        assert message.startswith(f"{setting.strip()}: the URL holds a credential ({found}), ") and "\n" not in message
        assert message.endswith(headers if setting != "--system-url" else "(sends $VARIABLE's value)")
        assert PASSWORD not in message and API_KEY not in message


def test_a_url_without_a_credential_is_taken_as_it_is():
    url = "https://rag.example/answer?tenant=a&design=b"
    assert system_run_config(None, url) == {"resources": {"rag": {"config": {"kind": "http", "target": url}}}}


def test_a_run_with_another_system_shows_its_own_ab_comparison_not_the_reference_systems(
        first_cli_run: SharedCheckout, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The reference system's run compares it with itself at k=3 (REVIEW). A run with ``--system`` answers with
    another system, with no candidate named: its A/B is SKIPPED (docs/ab.md), in this run. The summary used to
    show the reference system's comparison, "(earlier run ...)", as the current one. A plain run after it
    answers and compares for the configured system again, rather than showing the other system's results."""
    out, _ = first_cli_run.made  # the reference system's run: `rag-assets run --no-production`
    assert "current=reference-k5, candidate=reference-k3" in out
    summary = tmp_path / "summary.json"
    code = main(["run", "--no-production", "--system", "rag_assets.examples.callable_system:answer",
                 "--summary-json", str(summary)])
    out = capsys.readouterr().out
    data = json.loads(summary.read_text())
    ((version, ab),) = data["assets"]["ab_comparison"].items()
    assert ab["recommendation"] == "SKIPPED" and ab["reason"].startswith("only one system is configured")
    assert "ab_comparison" not in data["earlier_runs"] and "reference-k3" not in out
    (check,) = [c for c in data["checks"] if c["check"] == "ab_not_rejected"]
    assert check["passed"] and check["description"].startswith("not applicable: only one system is configured")
    assert data["assets"]["rag_answers"][version]["system"] == "rag_assets.examples.callable_system:answer"
    assert code == (1 if any(not c["passed"] for c in data["checks"]) else 0)

    assert main(["run", "--no-production", "--summary-json", str(summary)]) == 0, "back to the configured system"
    back = json.loads(summary.read_text())
    assert back["assets"]["rag_answers"][version]["system"] == "reference"
    assert back["assets"]["ab_comparison"][version]["current"] == "reference-k5"
    assert not {"rag_answers", "evaluation", "ab_comparison"} & set(back["earlier_runs"]), "answered and compared again"
