"""``rag-assets calibrate``: the configured judge against a small labelled file with hand-checked agreement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.errors import ConfigError
from rag_assets.scoring.agreement import balanced_accuracy, cohen_kappa, pair_agreement, roc_auc
from rag_assets.scoring.calibration import calibrate, load_labelled
from tests.conftest import PROJECT_ROOT
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_judge import judge_responder

LIMIT = ["Files can be at most 15 GB."]
FOUNDED = "When was Kestrel Labs founded?"
IN_2019, BY_ENGINEERS = "Kestrel Labs was founded in 2019.", "Kestrel Labs was founded by three engineers."
ROWS = [
    # faithfulness labels: the judge scores 1, 0, 1 and 1; the expert said 1, 0, 1 and 0 (disagrees on the last)
    {"question": "What is the maximum file size?", "answer": "Files can be at most 15 GB.", "contexts": LIMIT,
     "faithfulness": 1},
    {"question": "What is the maximum file size?", "answer": "Files can be at most 20 GB.", "contexts": LIMIT,
     "faithfulness": 0},
    {"question": "What is the maximum file size?", "answer": "Files are 15 GB at most.", "contexts": LIMIT,
     "faithfulness": 1},
    {"question": "How big can a file be?", "answer": "A file can be at most 15 GB.", "contexts": LIMIT,
     "faithfulness": 0},
    # answer relevance pairs: the judge scores 1.0 and 0.5; pair p1 agrees, pair p2 was labelled the other way round
    {"question": FOUNDED, "answer": IN_2019, "contexts": [], "answer_relevance": {"pair": "p1", "label": "good"}},
    {"question": FOUNDED, "answer": BY_ENGINEERS, "contexts": [], "answer_relevance": {"pair": "p1", "label": "bad"}},
    {"question": FOUNDED, "answer": BY_ENGINEERS, "contexts": [], "answer_relevance": {"pair": "p2", "label": "good"}},
    {"question": FOUNDED, "answer": IN_2019, "contexts": [], "answer_relevance": {"pair": "p2", "label": "bad"}},
]


def _write(path: Path, rows) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_the_measures_on_hand_computed_scores():
    assert roc_auc([1, 1, 0, 1], [1, 1, 0, 0]) == 0.75, "(1 + 0.5 + 1 + 0.5) / 4 pairs of a 1 and a 0"
    assert balanced_accuracy([1, 1, 0, 1], [1, 1, 0, 0]) == 0.75, "recall of the 1s 1, of the 0s 0.5"
    assert pair_agreement([1.0, 0.5, 0.7], [0.5, 1.0, 0.7]) == 0.5, "a win, a loss and a tie"
    assert cohen_kappa([1, 0, 1, 1], [1, 0, 1, 0]) == 0.5, "observed 0.75, chance 3/4 * 1/2 + 1/4 * 1/2 = 0.5"
    assert cohen_kappa([0.9, 0.2], [1, 0]) == 1.0 and cohen_kappa([0.9, 0.2], [0, 1]) == -1.0


def test_calibrate_reports_the_hand_checked_agreement(tmp_path: Path):
    report = calibrate(_write(tmp_path / "labelled.jsonl", ROWS))
    assert report.judge == "offline:offline-heuristics-v4" and report.answers == 8
    [relevance] = [m for m in report.metrics if m.metric == "answer_relevance"]
    [faithfulness] = [m for m in report.metrics if m.metric == "faithfulness"]
    assert (faithfulness.judge.kind, faithfulness.judge.n, faithfulness.longer_answer) == ("labels", 4, None)
    assert faithfulness.judge.agreement.value == 0.75 and faithfulness.judge.balanced_accuracy.value == 0.75
    assert faithfulness.judge.roc_auc.value == 0.75 and faithfulness.judge.kappa.value == 0.5
    assert 0.0 <= faithfulness.judge.agreement.low <= 0.75 <= faithfulness.judge.agreement.high <= 1.0
    assert (relevance.judge.kind, relevance.judge.n, relevance.judge.agreement.value) == ("pairs", 2, 0.5)
    assert relevance.longer_answer.agreement.value == 0.5, "the longer answer is the good one in p2 only"


def test_the_cli_prints_the_table_with_the_configured_judge(project_env: Path, tmp_path: Path, capsys):
    assert main(["calibrate", str(_write(tmp_path / "labelled.jsonl", ROWS))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("judge offline:offline-heuristics-v4, 8 labelled answers")
    assert "| faithfulness | labels | 4 | 0.750 [" in out and "| 0.500 [" in out and "| answer_relevance | pairs | 2 | 0.500 [" in out


def test_min_kappa_fails_the_run_on_a_labelled_metric_below_it_and_passes_it_above(
        project_env: Path, tmp_path: Path, capsys):
    labelled = str(_write(tmp_path / "labelled.jsonl", ROWS))
    assert main(["calibrate", labelled, "--min-kappa", "0.6"]) == 1, "faithfulness kappa is 0.5"
    assert capsys.readouterr().err == (
        "--min-kappa 0.6: judge agreement with your experts below κ=0.6: faithfulness κ=0.500\n")
    assert main(["calibrate", labelled, "--min-kappa", "0.4"]) == 0, "answer relevance has pairs: no kappa to fail"
    inverted = [{**row, "faithfulness": 1 - row["faithfulness"]} if "faithfulness" in row else row for row in ROWS]
    assert main(["calibrate", str(_write(tmp_path / "inverted.jsonl", inverted)), "--min-kappa", "0.4"]) == 1
    assert "below κ=0.4: faithfulness κ=-0.500" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["calibrate", labelled, "--min-kappa", "high"])
    assert stopped.value.code == 2 and "'high' is not a number; e.g. --min-kappa 0.6" in capsys.readouterr().err


def test_min_kappa_decides_an_undefined_kappa_as_the_judge_agreement_check_does(
        project_env: Path, tmp_path: Path, capsys):
    """Kappa is undefined where the judge and the expert gave every item one verdict (here: both pass the two
    grounded answers). Beside a measured metric that passes, that fails nothing; alone, nothing was measured."""
    agreed = [ROWS[0], ROWS[2]]
    recall = [{"question": "What is the maximum file size?", "answer": "Files can be at most 15 GB.",
               "contexts": contexts, "reference": "Files can be at most 15 GB.", "context_recall": label}
              for contexts, label in ((LIMIT, 1), (["Backups run nightly."], 0))]
    assert main(["calibrate", str(_write(tmp_path / "mixed.jsonl", agreed + recall)), "--min-kappa", "0.6"]) == 0
    assert "| faithfulness | labels | 2 |" in capsys.readouterr().out
    assert main(["calibrate", str(_write(tmp_path / "agreed.jsonl", agreed)), "--min-kappa", "0.6"]) == 1
    assert capsys.readouterr().err.startswith("--min-kappa 0.6: judge agreement not measurable")


def test_a_bad_file_is_rejected_whole_naming_line_and_field(project_env: Path, tmp_path: Path, capsys):
    bad = _write(tmp_path / "bad.jsonl", [
        ROWS[0], "{not json", {"question": "", "answer": "x", "contexts": [], "faithfulness": 2},
        {"question": "q?", "answer": "x", "contexts": ["c"], "context_recall": 1},
        {"question": "q?", "answer": "x", "contexts": "c", "answer_relevance": {"pair": "p9", "label": "good"}},
        {"question": "q?", "answer": "x", "contexts": []},
        {"question": "q?", "answer": "x", "contexts": [{"chunk_id": "a", "text": "x"}, {"chunk_id": "a", "text": "y"}],
         "faithfulness": 1}])
    with pytest.raises(ConfigError) as error:
        load_labelled(bad)
    message = str(error.value)
    assert f"{bad}:2: not JSON" in message
    assert f"{bad}:3: question: a non-empty string is required" in message
    assert f"{bad}:3: faithfulness: 0, 1 or" in message and "got 2" in message
    assert f"{bad}:4: context_recall: a label needs a reference answer" in message
    assert f"{bad}:5: contexts: a list of strings" in message
    assert f"{bad}:6: no label" in message
    assert f"{bad}:7: contexts: context 2: chunk id 'a' is given twice" in message
    assert main(["calibrate", str(bad)]) == 2
    assert "rejected (7 problem(s))" in capsys.readouterr().err


def test_a_pair_needs_one_good_and_one_bad_answer(tmp_path: Path):
    rows = [ROWS[4], {**ROWS[5], "answer_relevance": {"pair": "p1", "label": "good"}}]
    with pytest.raises(ConfigError, match=r"answer_relevance pair 'p1' \(lines 1, 2\): exactly one good and one bad"):
        load_labelled(_write(tmp_path / "pairs.jsonl", rows))


def test_a_duplicate_line_a_misspelt_metric_and_a_label_not_0_or_1_are_rejected_naming_line_and_field(
        project_env: Path, tmp_path: Path, capsys):
    """A line given twice would be counted twice (n doubled, the interval narrowed for nothing); a misspelt
    metric beside a correct one would be dropped without a word; 1.0 is no more a label than true is."""
    bad = _write(tmp_path / "bad.jsonl", [
        *ROWS, ROWS[0],                                              # line 9: line 1 again
        {**ROWS[1], "faithfulness": 1},                              # line 10: line 2's answer, labelled again
        {**ROWS[4], "answer_relevance": {"pair": "p1", "label": "good"}},  # line 11: line 5 again, in its pair
        {**ROWS[2], "faithfullness": 0},                             # line 12: a misspelt metric beside a label
        {**ROWS[3], "Faithfulness": 1, "question": "Is there a size cap?"},  # line 13: one in capitals
        {**ROWS[3], "faithfulness": 1.0, "question": "How large may a file be?"},  # line 14
        {**ROWS[3], "question": "Is there a limit? \ud800"},  # line 15: half of an emoji's escape
        {**ROWS[3], "question": "What is the file size limit?", "source": "ticket 12", "id": 7,  # fine: fields of
         "faithfulness_score": 0.8, "context_entity_recall": 1, "llm_context_precision": 0.5},  # other tools
    ])
    with pytest.raises(ConfigError) as error:
        load_labelled(bad)
    problems = str(error.value).splitlines()[1:]
    assert problems == [
        f"  - {bad}:12: faithfullness: not a metric; did you mean faithfulness? (labels: faithfulness, "
        "answer_relevance, context_precision, context_recall)",
        f"  - {bad}:13: Faithfulness: not a metric; did you mean faithfulness? (labels: faithfulness, "
        "answer_relevance, context_precision, context_recall)",
        f"  - {bad}:14: faithfulness: 0, 1 or {{\"pair\": \"<id>\", \"label\": \"good\" | \"bad\"}} is required, got 1.0",
        f"  - {bad}:15: question: contains an unpaired surrogate U+D800 at character 19 (an escape that stands for no "
        "character)",
        f"  - {bad}:9: faithfulness: the same answer is labelled on line 1; keep one",
        f"  - {bad}:10: faithfulness: the same answer is labelled on line 2; keep one",
        f"  - {bad}:11: answer_relevance: the same answer is labelled on line 5; keep one",
        f"  - {bad}:answer_relevance pair 'p1' (lines 5, 6, 11): exactly one good and one bad answer are required"
        .replace(f"{bad}:answer", f"{bad}: answer"),
    ]
    assert main(["calibrate", str(bad)]) == 2
    assert f"{bad} rejected (8 problem(s))" in capsys.readouterr().err
    assert calibrate(_write(tmp_path / "fine.jsonl", [*ROWS, {**ROWS[3], "source": "ticket 12", "id": 7,
                                                              "question": "What is the file size limit?"}])).answers == 9


def _strict_on_twenty_gb(body: dict) -> Reply:
    """The Claude-like judge, except that it finds the answer saying 20 GB fabricated (the labels say so too):
    its faithfulness verdicts are 1, 0, 1 and 1 on ROWS, kappa 0.5 with the expert's."""
    if body["tool_choice"]["name"] == "record_judge_faithfulness" and "20 GB" in json.dumps(body["messages"]):
        return Reply(tool_input={"claims": [{"claim": "Files can be at most 20 GB.", "verdict": "fabrication",
                                             "supporting_chunk_ids": []}]})
    return judge_responder(body)


def test_the_cli_calibrates_the_claude_judge_the_key_configures_and_never_prints_the_key(
        project_env: Path, tmp_path: Path):
    """The bundled LLM resource holds the key as an EnvVar; the command resolves it as a run does (it raised
    "Attempted to directly retrieve environment variable" and exited 1, read by CI as a failed kappa). Here the
    kappa fails, so the exit 1 must come with the table of Claude's verdicts and the kappa's own line, and nothing
    else; that the same κ=0.500 passes a lower --min-kappa (exit 0, nothing on stderr) is the command's rule, which
    test_min_kappa_fails_the_run_on_a_labelled_metric_below_it_and_passes_it_above shows on the same kappa."""
    labelled = str(_write(tmp_path / "labelled.jsonl", ROWS))
    key = "calibrate-placeholder-credential-0123456789"
    with FakeAnthropicServer(_strict_on_twenty_gb) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": server.base_url}
        below = subprocess.run([sys.executable, "-m", "rag_assets.cli", "calibrate", labelled, "--min-kappa", "0.6"],
                               env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
        assert server.requests and not server.errors
    assert below.returncode == 1, below.stderr
    assert below.stdout.startswith("judge anthropic:claude-sonnet-5-5, 8 labelled answers")
    assert "| faithfulness | labels | 4 | 0.750 [" in below.stdout
    assert below.stderr == "--min-kappa 0.6: judge agreement with your experts below κ=0.6: faithfulness κ=0.500\n"
    assert key not in below.stdout + below.stderr


def _billed_four_dollars(body: dict) -> Reply:
    """The Claude-like judge, each answer billed 2,000,000 input tokens ($4 on Sonnet 5.5) whatever its prompt."""
    reply = judge_responder(body)
    return Reply(tool_input=reply.tool_input, input_tokens=2_000_000, output_tokens=100)


@pytest.mark.parametrize(("responder", "max_cost_usd", "said"), [
    (judge_responder, "0.0001", "calibrate: judge budget: the estimated cost $"),  # nothing fits: nothing is sent
    (_billed_four_dollars, "5", "calibrate: judge budget: stopped: run calibrate has spent $"),  # passed while judging
])
def test_calibrate_stops_at_the_llm_budget_as_an_evaluation_does_in_one_line_and_prints_no_score(
        project_env: Path, tmp_path: Path, responder, max_cost_usd: str, said: str):
    """RAG_ASSETS_MAX_COST_USD caps what the evaluation's judge spends; calibrate sent every call whatever it cost.
    It exits 1 with one line saying why it stopped, and no table: an agreement of half-judged answers is no score."""
    labelled = str(_write(tmp_path / "labelled.jsonl", ROWS))
    with FakeAnthropicServer(responder) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "calibrate-placeholder-credential-0123456789",
               "ANTHROPIC_BASE_URL": server.base_url, "RAG_ASSETS_MAX_COST_USD": max_cost_usd}
        done = subprocess.run([sys.executable, "-m", "rag_assets.cli", "calibrate", labelled], env=env,
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
        sent = server.count()
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(said) and done.stderr.count("\n") == 1, done.stderr
    assert "RAG_ASSETS_MAX_COST_USD" in done.stderr
    if max_cost_usd == "5":  # $0 and $4 spent before the first requests; in flight at most 4 (the concurrency)
        assert 2 <= sent <= 5 and "calls were answered and are kept in the LLM cache" in done.stderr
    else:
        assert sent == 0 and "exceeds its budget: $0.0001, of which $0.0000 is spent; nothing was sent" in done.stderr
