"""rag_assets.evaluate: the assets' scoring from Python, with the asset's per-item values."""

from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

import rag_assets
from rag_assets.api import EvaluationResult
from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import read_chunks
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.resources import RESOURCES, RagSystemResource
from rag_assets.errors import ConfigError
from rag_assets.golden.importers import ExternalDataError
from rag_assets.llm.anthropic_client import AnthropicClient
from rag_assets.examples.callable_system import answer as example_answer
from rag_assets.scoring.judge_prompts import CONTEXT_PRECISION
from rag_assets.testing import assert_quality
from rag_assets.text.tokens import tokenize
from tests.conftest import SharedCheckout
from tests.defs.lifecycle import LifecycleRun, metadata
from tests.fakes import claude_judge
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.test_cli_bad_inputs import BAD_THRESHOLDS, KNOWN_METRICS

EXAMPLE = "rag_assets.examples.callable_system:answer"
LIMITS = "Rate limits: the API allows 50 requests per minute per key."
ROTATE = "To rotate a key, create a new key and delete the old one."


def test_the_api_scores_a_ragas_file_with_a_callable_and_gives_the_assets_per_item_values(
        lifecycle_run: LifecycleRun, bundled_lifecycle_checkout: SharedCheckout, tmp_path: Path):
    version, lifecycle, sample_corpus = lifecycle_run.version, lifecycle_run.result, bundled_lifecycle_checkout.corpus
    with lifecycle_run.instance() as instance:
        golden, reference = metadata(lifecycle, "golden_set"), metadata(lifecycle, "evaluation")
        ragas = golden["export_ragas"]
        scored = dg.materialize([rag_answers, evaluation], partition_key=version, instance=instance, raise_on_error=False,
                                resources={**RESOURCES, "rag": RagSystemResource(kind="callable", target=EXAMPLE)})
        asset = metadata(scored, "evaluation")
    result = rag_assets.evaluate(ragas, example_answer, corpus=sample_corpus)

    assert result.corpus_version == version and len(result.items) == asset["items"] == 48
    assert _values(result) == _stored(asset["evaluation_id"])
    again = rag_assets.evaluate(golden["export_jsonl"], "reference", corpus=sample_corpus)
    assert again.system_name == reference["system"] == "reference"
    assert _values(again) == _stored(reference["evaluation_id"]), "our export, the reference system: the lifecycle's"
    frame = result.to_pandas()
    assert len(frame) == 48 and set(result.metrics) <= set(frame.columns) and {"failures", "rag_error"} <= set(frame.columns)
    assert frame["faithfulness"].mean() == pytest.approx(asset["faithfulness"], abs=5e-5)
    assert result.summary["judge"] == asset["judge"] == "offline (deterministic heuristics, not a model's judgment)"
    assert asset["judge_calls_per_item"] == round(result.summary["judge_calls"] / 48, 2) == round(
        result.outcome.stats.calls / 48, 2), "the same calls, the statement splits included, from both"
    assert result.summary["metrics"]["recall@5"]["mean"] == pytest.approx(asset["recall@5"], abs=5e-5)
    page = result.write_report(tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count('<details class="item"') == 48 and "callable_system:answer" in page


def test_a_system_with_its_own_chunking_gets_the_assets_temporal_faithfulness_on_the_items_its_definition_names(
        lifecycle_run: LifecycleRun, bundled_lifecycle_checkout: SharedCheckout):
    """The tester's case: 200-character windows under the system's own ids. The asset knew the versions of the
    evidence documents only (the chunks a shard reads), so a context lying in another document had none and an
    item that retrieved v1 and v2 texts went unscored; the API, with the whole snapshot, scored it."""
    version, sample_corpus = lifecycle_run.version, bundled_lifecycle_checkout.corpus
    with lifecycle_run.instance() as instance:
        ragas = metadata(lifecycle_run.result, "golden_set")["export_ragas"]
        scored = dg.materialize([rag_answers, evaluation], partition_key=version, instance=instance, raise_on_error=False,
                                resources={**RESOURCES, "rag": RagSystemResource(kind="callable", target=WINDOWED)})
        asset = metadata(scored, "evaluation")
    result = rag_assets.evaluate(ragas, _windowed, corpus=sample_corpus)

    temporal = {(item, m): v for (item, m), v in _values(result).items() if m == "temporal_faithfulness"}
    stored = {(item, m): v for (item, m), v in _stored(asset["evaluation_id"]).items() if m == "temporal_faithfulness"}
    assert temporal == stored, "the asset's per-item temporal faithfulness, item by item"
    versions = {c.path: c.doc_version for c in read_chunks(sample_corpus, ChunkerConfig())[1]}
    applies = set()
    for scores in result.outcome.items:
        placed = {r.key: versions[r.span.path] for r in result.responses[scores.item_id].retrieved
                  if r.span is not None and versions.get(r.span.path)}
        relied_on = {c for claim in scores.claims if claim["verdict"] == "grounded"
                     for c in claim.get("supporting_chunk_ids", ())} & placed.keys()
        if len(set(placed.values())) > 1 and relied_on:
            applies.add(scores.item_id)
    assert {item for item, _ in temporal} == applies and len(applies) >= 10, (
        "scored where the contexts come from several versions and the answer relies on one of those, only there")


WINDOWED = "tests.test_api:_windowed"


def _windowed(request: dict) -> dict:
    """A system of its own: the corpus files cut into 200-character windows named w<n>, ranked by shared words;
    the answer is the best window's first line, citing it."""
    import os
    import re

    root = Path(os.environ["RAG_ASSETS_CORPUS_ROOT"])
    windows = [(f"w{n:05d}", path.relative_to(root).as_posix(), text) for n, (path, text) in enumerate(
        (path, body[start:start + 200]) for path in sorted(p for p in root.rglob("*") if p.is_file())
        for body in [path.read_text(encoding="utf-8")] for start in range(0, len(body), 200))
        if text.strip()]
    wanted = set(re.findall(r"[a-z0-9]+", request["question"].lower()))
    ranked = sorted(windows, key=lambda w: (-len(wanted & set(re.findall(r"[a-z0-9]+", w[2].lower()))), w[0]))
    hits = ranked[:request["k"]]
    first = next((line for line in hits[0][2].splitlines() if len(line.split()) > 3), hits[0][2].strip())
    return {"answer": f"{first} [{hits[0][0]}]",
            "retrieved": [{"id": wid, "text": text, "source": source} for wid, source, text in hits]}


def _values(result: EvaluationResult) -> dict[tuple[str, str], float]:
    return {(i.item_id, metric): value for i in result.outcome.items for metric, value in i.values.items()}


def _stored(evaluation_id: str) -> dict[tuple[str, str], float]:
    stored, _ = RESOURCES["store"].evaluations().item_values(evaluation_id)
    return {(item_id, metric): value for (item_id, _), values in stored.items() for metric, value in values.items()}


#: two items in ragas' columns: the rate limit, which _system's context holds, and key rotation, which it does not
TWO_ITEMS = pd.DataFrame([
    {"item_id": "limits", "user_input": "What is the rate limit?", "reference": "50 requests per minute.",
     "reference_contexts": [LIMITS]},
    {"item_id": "rotate", "user_input": "How do I rotate a key?", "reference": "Create a new key, delete the old.",
     "reference_contexts": [ROTATE]},
])


def _system(request: dict) -> dict:
    """Brings back the rate-limit context for every question: right for the first item, wrong for the second."""
    return {"answer": "The API allows 50 requests per minute per key [1].", "retrieved": [{"id": "1", "text": LIMITS}]}


def test_a_dataframe_without_a_corpus_is_scored_against_its_own_reference_contexts():
    frame = pd.DataFrame([
        {"question": "What is the rate limit?", "ground_truth": "50 requests per minute.", "reference_contexts": [LIMITS]},
        {"question": "How do I rotate a key?", "ground_truth": "Create a new key, delete the old.",
         "reference_contexts": [ROTATE]},
    ])
    result = rag_assets.evaluate(frame, _system)
    rows = result.to_pandas().set_index("question")
    limits, rotate = rows.loc["What is the rate limit?"], rows.loc["How do I rotate a key?"]
    assert (limits["recall@5"], limits["precision@5"], limits["mrr@5"], limits["contexts_unmapped_share"]) == (
        1.0, 0.2, 1.0, 0.0)
    assert (rotate["recall@5"], rotate["precision@5"], rotate["mrr@5"]) == (0.0, 0.0, 0.0)
    assert math.isnan(limits["citation_accuracy"]) and limits["failures"] == {} and limits["rag_error"] is None
    assert result.summary["metrics"]["hit_rate@5"] == {"mean": 0.5, "std": pytest.approx(0.7071, abs=1e-4), "n": 2,
                                                        "failures": 0}
    assert result.summary["system"] == "tests.test_api:_system" and result.summary["rag_errors"] == 0


def test_the_summarys_judge_calls_count_the_calls_that_split_references_into_statements():
    """The summary counted only the calls that judge answers (8 here) while the evaluation asset's llm_calls and
    judge probes counted the statement splits too (10): one figure, ``EvaluationOutcome.calls``, for all."""
    frame = pd.DataFrame({"item_id": ["limits", "rotate"], "user_input": ["What is the rate limit?", "How to rotate?"],
                          "reference": ["50 requests per minute.", "Create a new key, delete the old."],
                          "reference_contexts": [[LIMITS], [ROTATE]]})
    result = rag_assets.evaluate(frame, _system)
    assert result.outcome.statement_calls == 2 and result.outcome.judge_calls == 8
    assert result.summary["judge_calls"] == result.outcome.calls == result.outcome.stats.calls == 10


def test_a_context_holding_the_reference_context_with_text_around_it_hits_it():
    """Without a corpus the reference contexts are the documents; a system's chunk is often longer than the one
    sentence an expert marked. It was unmapped, a miss, once the text around it was over a fifth of the chunk."""
    frame = pd.DataFrame([{"item_id": "limits", "question": "What is the rate limit?",
                           "ground_truth": "50 requests per minute.", "reference_contexts": [LIMITS]}])
    around = ("Quotas are counted per organisation and reset at midnight UTC; the dashboard shows the current use. "
              f"{LIMITS} Requests over the limit get HTTP 429 with a Retry-After header saying when to try again.")
    result = rag_assets.evaluate(frame, lambda request: {"answer": "50 per minute.",
                                                         "retrieved": [{"id": "chunk-7", "text": around}]})
    row = result.to_pandas().iloc[0]
    assert (row["hit_rate@5"], row["recall@5"], row["mrr@5"], row["contexts_unmapped_share"]) == (1.0, 1.0, 1.0, 0.0)
    held, words = len(tokenize(LIMITS)), len(tokenize(around))
    assert (held, words) == (11, 43)
    assert (row["token_recall@5"], row["token_precision@5"]) == (1.0, pytest.approx(held / words, abs=1e-9)), \
        "the words around the evidence are retrieved, not evidence"


def test_a_context_that_begins_before_the_reference_context_and_ends_inside_it_hits_it():
    """The tester's case: without a corpus, a system's chunk that ended in the reference context's last word, having
    begun well before it, was unmapped, a miss, where the same chunk located in the corpus is a hit."""
    frame = pd.DataFrame([{"item_id": "limits", "question": "What is the rate limit?",
                           "ground_truth": "50 requests per minute.", "reference_contexts": [LIMITS]}])
    before = ("Quotas are counted per organisation and reset at midnight UTC; the dashboard shows the current use "
              "and the history of the last thirty days. ")
    chunk = before + LIMITS[:-3]  # ends in "k", the start of "key."
    result = rag_assets.evaluate(frame, lambda request: {"answer": "50 per minute.",
                                                         "retrieved": [{"id": "chunk-7", "text": chunk}]})
    row = result.to_pandas().iloc[0]
    assert (row["hit_rate@5"], row["recall@5"], row["mrr@5"], row["contexts_unmapped_share"]) == (1.0, 1.0, 1.0, 0.0)
    assert (len(tokenize(LIMITS)), len(tokenize(chunk))) == (11, 35)
    assert (row["token_recall@5"], row["token_precision@5"]) == (1.0, pytest.approx(11 / 35, abs=1e-9)), \
        "the reference context's words up to the cut, in its last, are retrieved; the words before it are not evidence"


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_reference_context_is_refused_naming_its_row_and_field(blank: str):
    """The tester's case: without a corpus an empty reference context crashed with "a span needs 0 <= start < end"
    naming a hash, and one of spaces became evidence no retrieved text can ever hit."""
    frame = pd.DataFrame({"user_input": ["What is the rate limit?", "What is the burst limit?"],
                          "reference": ["50 requests per minute.", "10 requests."],
                          "reference_contexts": [[LIMITS], [ROTATE, blank]]})
    with pytest.raises(ExternalDataError) as raised:
        rag_assets.evaluate(frame, _system)
    assert str(raised.value) == ("DataFrame: row 2: field 'reference_contexts' element 2 is empty (an item that "
                                 "nothing answers has no reference contexts: [])")


def test_evaluate_works_where_an_event_loop_is_running_as_in_a_notebook_cell():
    frame = pd.DataFrame([{"question": "What is the rate limit?", "ground_truth": "50 requests per minute.",
                           "reference_contexts": [LIMITS]}])
    outside = rag_assets.evaluate(frame, _system).to_pandas()

    async def cell() -> pd.DataFrame:  # Jupyter runs each cell inside its running loop
        return rag_assets.evaluate(frame, _system).to_pandas()

    inside = asyncio.run(cell())
    columns = ["recall@5", "precision@5", "faithfulness", "answer_relevance"]
    assert inside[columns].to_dict("records") == outside[columns].to_dict("records")
    assert inside["recall@5"].tolist() == [1.0]


def test_a_golden_set_export_without_its_corpus_says_what_to_pass(tmp_path: Path):
    export = tmp_path / "golden-v1.jsonl"
    export.write_text('{"item_id": "q-1", "revision": 1, "question_type": "factual", "question": "q?", '
                      '"reference_answer": "a", "corpus_version": "cv-1", "origin": "generated", '
                      '"relevant_chunks": [{"chunk_id": "c1", "content_hash": "h"}]}\n', encoding="utf-8")
    with pytest.raises(ExternalDataError, match=r"^a golden-set export names its chunks by snapshot id: pass corpus="):
        rag_assets.evaluate(export, _system)


def test_assert_quality_lists_the_failing_metrics_with_their_worst_items_and_passes_what_meets_them(tmp_path: Path):
    frame = TWO_ITEMS
    result = rag_assets.evaluate(frame, _system)
    with pytest.raises(AssertionError) as failed:
        assert_quality(result, {"faithfulness": 0.9, "recall@5": 0.8, "mrr@5": 0.75, "temporal_faithfulness": 0.5})
    assert str(failed.value) == (
        "RAG quality below the given thresholds (offline (deterministic heuristics, not a model's judgment)): "
        "2 of 3 metrics fail\n"
        "  recall@5 0.500 < 0.800; worst: 'How do I rotate a key?' (rotate) 0.000, 'What is the rate limit?' (limits) "
        "1.000\n"
        "  mrr@5 0.500 < 0.750; worst: 'How do I rotate a key?' (rotate) 0.000, 'What is the rate limit?' (limits) "
        "1.000\n"
        "  not applicable (no item calls for it): temporal_faithfulness")
    thresholds = tmp_path / "thresholds.yaml"
    thresholds.write_text("faithfulness: 0.9\nhit_rate@5: 0.5\n", encoding="utf-8")
    assert_quality(result, thresholds)
    assert_quality(result, str(thresholds))
    with pytest.raises(AssertionError, match=r"^RAG quality below profile offline \(offline .*\): 2 of 5 metrics fail\n"
                                             r"  context_recall 0\.500 < 0\.700; worst: 'How do I rotate a key\?' \(rotate\) 0\.000, "
                                             r"'What is the rate limit\?' \(limits\) 1\.000\n"):
        assert_quality(result, "auto")  # the offline judge's own profile


def test_assert_quality_refuses_thresholds_that_gate_nothing_or_name_a_metric_twice_wrongly_or_out_of_range(
        tmp_path: Path):
    """The CLI's verdict on the same file (tests/test_cli_bad_inputs.py): an empty file or ``{}`` passed every
    result with no gate, a minimum of 1.5 in a mapping was taken as given, a misspelt metric failed as unmeasured."""
    result = rag_assets.evaluate(TWO_ITEMS, _system)
    for name, content, problem in BAD_THRESHOLDS:
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        for given in (path, str(path)):
            with pytest.raises(ConfigError) as refused:
                assert_quality(result, given)
            assert str(refused.value) == problem.format(file=f"thresholds file {path}"), name
    for given, problem in [
            ({}, "the given thresholds: sets no metric, so it would gate nothing; for example 'faithfulness: 0.85'"),
            ({"faithfulness": 1.5}, "the given thresholds, field faithfulness: expected a number in [0, 1], got 1.5"),
            ({"faithfulness": True}, "the given thresholds, field faithfulness: expected a number in [0, 1], got True"),
            ({"faithfullness": 0.9}, "the given thresholds, field faithfullness: not a metric (did you mean "
                                     "faithfulness?); the metrics at k=5: " + KNOWN_METRICS)]:
        with pytest.raises(ConfigError) as refused:
            assert_quality(result, given)
        assert str(refused.value) == problem
        with pytest.raises(ConfigError):
            result.write_report(tmp_path / "report.html", given)
    assert not (tmp_path / "report.html").exists()


def test_at_k_3_a_thresholds_file_names_the_metrics_at_3(tmp_path: Path):
    result = rag_assets.evaluate(TWO_ITEMS, _system, k=3)
    path = tmp_path / "at5.yaml"
    path.write_text("hit_rate@5: 0.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        assert_quality(result, path)
    assert str(refused.value) == (f"thresholds file {path}, field hit_rate@5: not a metric (did you mean hit_rate@3?); "
                                  "the metrics at k=3: " + KNOWN_METRICS.replace("@5", "@3"))
    path.write_text("hit_rate@3: 0.5\n", encoding="utf-8")
    assert_quality(result, path)


def _failing(request: dict) -> dict:
    """A system that is down for the rotation question and answers the other one."""
    if "rotate" in request["question"]:
        raise ConnectionError("search backend unreachable")
    return _system(request)


def test_a_system_that_failed_on_the_items_fails_the_gates_even_where_no_gated_metric_applies(tmp_path: Path):
    """The tester's case: every item raised, and a gate on a metric no item had left (citation accuracy) passed."""
    frame = TWO_ITEMS
    down = rag_assets.evaluate(frame.iloc[1:], _failing)
    gates = down.gates({"citation_accuracy": 0.5})
    assert [(t.metric, t.applicable) for t in gates.thresholds] == [("citation_accuracy", False)]
    assert (gates.rag_errors.errors, gates.rag_errors.items, gates.passed) == (1, 1, False)
    with pytest.raises(AssertionError) as failed:
        assert_quality(down, {"citation_accuracy": 0.5})
    head, budget = str(failed.value).splitlines()[:2]
    assert head.endswith(": 0 of 0 metrics fail, and the RAG error budget is spent")
    assert budget.startswith("  RAG errors: 1 of 1 items errored (100.0%, budget 5.0%); exception x1, e.g. rotate: ")
    page = down.write_report(tmp_path / "report.html", {"citation_accuracy": 0.5}).read_text(encoding="utf-8")
    assert re.search(r"RAG error budget</td><td><span class=\"badge fail\">failed", page), "the report agrees"
    half = rag_assets.evaluate(frame, _failing)
    assert not half.gates({"faithfulness": 0.5}).passed, "one item of two errored: over the 5% budget"
    assert half.gates({"faithfulness": 0.5}, max_rag_error_rate=0.5).passed
    assert_quality(half, {"faithfulness": 0.5}, max_rag_error_rate=0.5)


def test_at_k_3_the_profile_gates_hit_rate_at_3_not_a_cut_off_the_evaluation_never_computed():
    frame = pd.DataFrame([{"item_id": "limits", "user_input": "What is the rate limit?",
                           "reference": "50 requests per minute.", "reference_contexts": [LIMITS]}])
    result = rag_assets.evaluate(frame, _system, k=3)
    assert result.thresholds("offline")["hit_rate@3"] == 0.75 and "hit_rate@5" not in result.thresholds("offline")
    assert [(g.metric, g.applicable) for g in result.gates("offline").thresholds if "@" in g.metric] == [
        ("hit_rate@3", True)]


def _judged_by_claude_with_a_broken_tool(monkeypatch: pytest.MonkeyPatch, tool: str) -> EvaluationResult:
    """One item judged by the fake Claude, which answers ``tool``'s calls with a schema-invalid input."""
    frame = pd.DataFrame({"item_id": ["limits"], "user_input": ["What is the rate limit?"],
                          "reference": ["50 requests per minute."], "reference_contexts": [[LIMITS]]})
    monkeypatch.setattr(claude_judge, "BROKEN", {tool})
    with FakeAnthropicServer(claude_judge.judge_responder) as server:
        judge = AnthropicClient("sk-test", "claude-sonnet-5-5", base_url=server.base_url, max_retries=1)
        return rag_assets.evaluate(frame, _system, judge=judge)


def test_with_claude_as_judge_a_spent_failure_budget_fails_assert_quality_and_failures_are_per_item(
        monkeypatch: pytest.MonkeyPatch):
    result = _judged_by_claude_with_a_broken_tool(monkeypatch, "record_judge_context_precision")
    assert result.summary["judge"] == "anthropic / claude-sonnet-5-5"
    row = result.to_pandas().iloc[0]
    assert math.isnan(row["context_precision"]) and row["faithfulness"] == 1.0
    assert row["failures"]["context_precision"].startswith(f"{CONTEXT_PRECISION.ref} parse_error: ")
    with pytest.raises(AssertionError) as failed:
        assert_quality(result, {"faithfulness": 0.5})
    assert str(failed.value) == ("RAG quality below the given thresholds (anthropic / claude-sonnet-5-5): 0 of 1 metrics "
                                 "fail\n  context_precision: 1 of 1 items (100.0%) not judged; budget 5%")
    gates = result.gates({"faithfulness": 0.5})
    assert not gates.failure_budget_passed, "the same verdict as the asset's check: one function decides both"
    assert gates.failure_budget_text() == "context_precision: 1 of 1 items (100.0%) not judged; budget 5%"


def test_a_reference_the_judge_could_not_split_is_a_context_recall_failure_not_a_skipped_item(
        monkeypatch: pytest.MonkeyPatch):
    """Skipped, an item whose statements could not be extracted left context recall's mean (over the others) and
    its failure budget: a judge failing on the hard references lifted the figure. A failed call is a judge failure
    (retried on the next run), named as such."""
    result = _judged_by_claude_with_a_broken_tool(monkeypatch, "record_extract_reference_statements")
    row = result.to_pandas().iloc[0]
    assert math.isnan(row["context_recall"]) and row["faithfulness"] == 1.0
    assert row["failures"]["context_recall"].startswith("extract_reference_statements@1 parse_error: ")
    assert result.outcome.judge_failures == 1, "the statements call failed, and only it"
    assert "context_recall: 1 of 1 items (100.0%) not judged; budget 5%" in result.gates(
        {"faithfulness": 0.5}).failure_budget_text()


def test_a_long_question_is_cut_short_where_a_failure_names_it():
    from rag_assets.testing import _named

    assert _named("x" * 100, "q-1") == "'" + "x" * 59 + "…' (q-1)"
    assert _named("Short?", "q-2") == "'Short?' (q-2)"


LIMITS_CLAIM = "The API allows 50 requests per minute per key."


def _cites_its_context(request: dict) -> dict:
    """A system with its own chunk ids that cites the context it returned: right for the rate-limit question."""
    return {"answer": f"{LIMITS_CLAIM} [limits-3]", "retrieved": [{"id": "limits-3", "text": LIMITS}],
            "citations": [{"claim": LIMITS_CLAIM, "chunk_id": "limits-3"}]}


def _also_cites_an_id_that_does_not_exist(request: dict) -> dict:
    """The same, citing as well, on the rate-limit question, an id it never returned and no corpus has."""
    response = _cites_its_context(request)
    if "rate limit" in request["question"]:
        response["citations"].append({"claim": LIMITS_CLAIM, "chunk_id": "limits-99"})
    return response


def test_a_citation_of_an_id_nothing_returned_is_a_fabricated_citation_not_an_errored_item():
    """A tester's case: a team's system retrieved the right context and cited one id it never returned. The item
    became an unknown_chunks error, scored at every metric's worst (hit rate 0, faithfulness 0) and spending the
    error budget. By docs/metrics.md the citation is fabricated and wrong: of the item's two citations one supports
    its claim, so citation accuracy is 1/2 where the system without it scores 1, and nothing else moves."""
    clean = rag_assets.evaluate(TWO_ITEMS, _cites_its_context)
    cited = rag_assets.evaluate(TWO_ITEMS, _also_cites_an_id_that_does_not_exist)
    before, after = _values(clean), _values(cited)
    assert (before[("limits", "citation_accuracy")], after[("limits", "citation_accuracy")]) == (1.0, 0.5)
    assert (after[("limits", "hit_rate@5")], after[("limits", "faithfulness")]) == (1.0, 1.0)
    assert {key: value for key, value in after.items() if key != ("limits", "citation_accuracy")} == {
        key: value for key, value in before.items() if key != ("limits", "citation_accuracy")}
    assert [(i.item_id, i.rag_error, i.fabricated_citations) for i in cited.outcome.items] == [
        ("limits", None, 1), ("rotate", None, 0)]
    assert (clean.summary["fabricated_citations"], cited.summary["fabricated_citations"]) == (0, 1)
    assert cited.summary["rag_errors"] == 0
    assert cited.summary["metrics"]["citation_accuracy"]["mean"] == pytest.approx(
        clean.summary["metrics"]["citation_accuracy"]["mean"] - 0.5 / 2, abs=1e-12)
    budget = cited.gates({"faithfulness": 0.5}).rag_errors
    assert budget.passed and budget.describe() == "0 of 2 items errored (0.0%, budget 5.0%)"
