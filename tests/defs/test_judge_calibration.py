"""The judge-review round trip through Dagster: an evaluation sends its sample to the outbox, an expert fills the
workbook, the inbox sensor requests the calibration run, judge_calibration measures the agreement, the next
evaluation and its report show it, and the judge_agreement check fails below the threshold and on a new judge."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import openpyxl
import pytest

from rag_assets.definitions import defs
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.graph import build_definitions
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.resources import RESOURCES, LLMResource
from rag_assets.settings import Settings
from tests.defs.lifecycle import LifecycleRun, check_evaluations, inbox_tick, metadata, stage_sample_review
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder

CALIBRATE = "judge_calibration_import"


def review_judge_as_expert(workbook: str, reviewer: str, decide: Callable[[str, str], str | None]) -> Path:
    """Open the outbox workbook, type ``decide(metric, judge cell)`` into each expert_<metric> cell (None: leave it
    empty) and the reviewer's name, and save it into the inbox under its name, as a spreadsheet user would."""
    book = openpyxl.load_workbook(workbook)
    sheet = book["Review"]
    header = [c.value for c in sheet[1]]
    for row in range(2, sheet.max_row + 1):
        for metric in ("faithfulness", "answer_relevance", "context_precision", "context_recall"):
            judged = sheet.cell(row, header.index(f"judge_{metric}") + 1).value
            sheet.cell(row, header.index(f"expert_{metric}") + 1).value = (
                None if judged == "not judged" else decide(metric, judged.split()[0]))
        sheet.cell(row, header.index("reviewer") + 1).value = reviewer
    target = Settings.from_env().curation_root / "inbox" / Path(workbook).name
    target.parent.mkdir(parents=True, exist_ok=True)
    book.save(target)
    return target


def _calibrate(instance: dg.DagsterInstance, cursor: str | None = None,
               also: tuple[str, str | None] | None = None) -> tuple[dg.ExecuteInProcessResult, str]:
    """One inbox tick, which must request the calibration run (and ``also`` that request), and that run."""
    tick = inbox_tick(instance, cursor)
    requests = {(r.job_name, r.partition_key): r for r in tick.run_requests}
    assert sorted(requests, key=str) == sorted([(CALIBRATE, None), *([also] if also else [])], key=str)
    result = defs.resolve_job_def(CALIBRATE).execute_in_process(instance=instance,
                                                              run_config=requests[CALIBRATE, None].run_config)
    assert result.success
    return result, tick.cursor


def test_judge_review_round_trip_calibration_and_the_check_on_threshold_and_judge_change(
        lifecycle_run: LifecycleRun, monkeypatch: pytest.MonkeyPatch):
    version = lifecycle_run.version  # the lifecycle ran on the sample with its bundled review
    with lifecycle_run.instance() as instance:
        first = metadata(lifecycle_run.result, "evaluation")
        assert first["judge_review_items"] == 30
        assert "- answer_relevance 0.400 · judge not calibrated with your experts" in first["judge_calibration"]

        # The expert agrees with the judge on answer relevance except on its first "pass", agrees on context
        # precision and recall, and leaves faithfulness (all pass here: no kappa to learn) empty.
        flipped = []

        def mostly_agree(metric: str, judge: str) -> str | None:
            if metric == "faithfulness":
                return None
            if metric == "answer_relevance" and judge == "pass" and not flipped:
                flipped.append(judge)
                return "fail"
            return judge

        workbook = review_judge_as_expert(first["judge_review_workbook"], "dana", mostly_agree)
        stage_sample_review(version)  # a question review in the inbox at the same time keeps its own job
        result, cursor = _calibrate(instance, also=("curation_import", version))
        (Settings.from_env().curation_root / "inbox" / f"review-{version}.csv").unlink()
        calibration = metadata(result, "judge_calibration")
        # answer relevance on the 27 non-adversarial items: the judge passes 9 and fails 18; the expert passes 8.
        #   expert \ judge  pass fail
        #   pass              8    0
        #   fail              1   18      p_o = 26/27; p_e = (9/27)(8/27) + (18/27)(19/27) = 414/729
        # kappa = (702/729 - 414/729) / (1 - 414/729) = 288/315 = 32/35 = 0.9143
        assert "| jc-" in calibration["calibration"] and "| answer_relevance | 27 | 0.963 |" in calibration["calibration"]
        assert "| 8 / 0 | 1 / 18 |" in calibration["calibration"]
        assert calibration["kappa_answer_relevance"] == round(32 / 35, 4)
        assert calibration["kappa_context_precision"] == 1.0 and "kappa_faithfulness" not in calibration
        assert calibration["disagreements"].count("| answer_relevance |") == 1
        assert (workbook.parent.parent / "processed" / workbook.name).exists() and not workbook.exists()
        check = check_evaluations(result)["judge_agreement"]
        assert check.passed and check.severity == dg.AssetCheckSeverity.WARN

        # the next evaluation, and its report, show each metric beside its judge's calibration
        again = dg.materialize([evaluation], partition_key=version, instance=instance, resources=RESOURCES)
        shown = metadata(again, "evaluation")
        line = re.search(r"- answer_relevance 0\.400 · (judge agreement with your experts κ=0\.91 "
                         r"\(95% interval 0\.\d\d to 1\.00\), n=27)", shown["judge_calibration"])
        assert line is not None, shown["judge_calibration"]
        assert line.group(1) in Path(shown["report"]).read_text()

        # a second expert contradicts every answer-relevance verdict of the new sample: kappa falls below 0.6
        review_judge_as_expert(shown["judge_review_workbook"], "lee",
                          lambda metric, judge: {"pass": "fail", "fail": "pass"}[judge]
                          if metric == "answer_relevance" else None)
        result, cursor = _calibrate(instance, cursor)
        check = check_evaluations(result)["judge_agreement"]
        assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
        assert check.description.startswith("judge agreement with your experts below κ=0.6: answer_relevance κ=")

        # a new judge model: the check fails (as an error, configured) until a review of it comes back
        monkeypatch.setenv("RAG_ASSETS_JUDGE_CALIBRATION_SEVERITY", "ERROR")
        with FakeAnthropicServer(judge_responder) as server:
            claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url,
                                 judge_model="claude-haiku-4-5")
            judged = dg.materialize([evaluation], partition_key=version, instance=instance, raise_on_error=False,
                                    resources={**RESOURCES, "llm": claude},
                                    run_config={"ops": {"evaluation": {"config": {"judge_review_sample": 0}}}})
        claude_meta = metadata(judged, "evaluation")
        assert "judge not calibrated with your experts" in claude_meta["judge_calibration"]
        assert "judge_review_workbook" not in claude_meta  # no review sent, yet its judge is the one in use now
        rerun = defs.resolve_job_def(CALIBRATE).execute_in_process(instance=instance)
        check = check_evaluations(rerun)["judge_agreement"]
        assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
        assert check.description.startswith(
            "the judge configuration changed since the last calibration (provider offline -> anthropic, model "
            "offline-heuristics-v4 -> claude-haiku-4-5)")



def test_the_judge_agreement_is_checked_after_every_evaluation_not_only_after_an_import(
        lifecycle_run: LifecycleRun, tmp_path: Path):
    """Before any expert verdict the check passes as not applicable. Once the offline judge is calibrated, an
    evaluation by Claude makes the check fail (the judge in use is not the one calibrated): in the evaluation's own
    run when it passes its gates, and by automation after a run whose evaluation failed a gate (which stops what
    follows it). It used to keep the offline judge's pass until the next judge review came back."""
    version = lifecycle_run.version  # the lifecycle ran on the sample with its bundled review
    lenient = tmp_path / "lenient.json"
    lenient.write_text('{"faithfulness": 0.0}', encoding="utf-8")
    with lifecycle_run.instance() as instance:
        first = lifecycle_run.result
        check = check_evaluations(first)["judge_agreement"]
        assert check.passed and check.description.startswith("not applicable: no expert verdicts imported yet")
        review_judge_as_expert(metadata(first, "evaluation")["judge_review_workbook"], "dana",
                               lambda metric, judge: None if metric == "faithfulness" else judge)
        calibrated, _ = _calibrate(instance)
        assert check_evaluations(calibrated)["judge_agreement"].passed

        with FakeAnthropicServer(judge_responder) as server:
            claude = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url)
            keyed = build_definitions(BUNDLED, {**RESOURCES, "llm": claude})
            start = dg.evaluate_automation_conditions(defs=keyed, instance=instance)
            gated = keyed.resolve_job_def("reevaluate").execute_in_process(
                partition_key=version, instance=instance, raise_on_error=False)
            assert not check_evaluations(gated)["evaluation_thresholds"].passed, "answer_relevance 0.5 < 0.8"
            assert "judge_agreement" not in check_evaluations(gated), "a failed gate stops what follows it"
            after = dg.evaluate_automation_conditions(defs=keyed, instance=instance, cursor=start.cursor)
            assert after.get_num_requested(BUNDLED.key("judge_calibration")) == 1
            automated = keyed.resolve_job_def(CALIBRATE).execute_in_process(instance=instance)
            passing = keyed.resolve_job_def("reevaluate").execute_in_process(
                partition_key=version, instance=instance, raise_on_error=False,
                run_config={"ops": {"evaluation": {"config": {"thresholds_file": str(lenient)}}}})
        assert ": anthropic / claude-sonnet-5-5, " in metadata(passing, "evaluation")["judge_config"]
        assert ": anthropic / claude-sonnet-5-5, " in metadata(passing, "judge_calibration")["judge_config"]
        for run in (automated, passing):
            check = check_evaluations(run)["judge_agreement"]
            assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
            assert check.description.startswith("the judge configuration changed since the last calibration "
                                                "(provider offline -> anthropic")
