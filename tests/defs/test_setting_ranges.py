"""Settings out of range are refused before anything runs, with one line naming the setting, its value and an
example (rag_assets.ranges, rag_assets.scoring.gate_settings), through every way in: the assets' run config,
the rag resource's config, an instance's defs.yaml and the Python API. The tester's cases: alpha 0 switched the
regression gate off, a judge failure budget of 5 read "500%", an allowed drop for a misspelt metric was ignored,
k 0 failed every answer (or divided by zero in judge_shard) and max_concurrency 0 failed in the thread pool."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import dagster as dg
import numpy as np
import pytest

import rag_assets
from rag_assets.cli import main
from rag_assets.component import RagEvaluation
from rag_assets.defs.assets.ab import ab_comparison
from rag_assets.defs.assets.evaluation import evaluation
from rag_assets.defs.assets.production import production_sample
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.resources import RESOURCES
from rag_assets.errors import ConfigError
from rag_assets.ranges import at_least_one, share
from rag_assets.testing import assert_quality
from tests.test_api import TWO_ITEMS, _system
from tests.test_cli_instance import EXAMPLE
from tests.test_cli_bad_inputs import KNOWN_METRICS

ALPHA = "alpha must be between 0 and 1, both excluded, got {}; for example alpha: 0.05"
JUDGE_BUDGET = "max_judge_failure_rate must be in [0, 1], got {}; for example max_judge_failure_rate: 0.05"
TYPO = ("allowed_drops, field faithfullness: not a metric (did you mean faithfulness?); the metrics at k=5: "
        + KNOWN_METRICS)
PRODUCTION_METRICS = "faithfulness, answer_relevance, context_precision, citation_accuracy"
PRODUCTION_TYPO = ("allowed_drops, field faithfullness: not a production metric (did you mean faithfulness?); the "
                   "production metrics: " + PRODUCTION_METRICS)
DROP = "allowed_drops.faithfulness must be in [0, 1], got 7; for example allowed_drops.faithfulness: 0.03"
K = "k must be a whole number of at least 1, got {}; for example k: 5"
TIMEOUT = "timeout_seconds must be a number above 0, got 0; for example timeout_seconds: 30"
CONCURRENCY = "max_concurrency must be a whole number of at least 1, got 0; for example max_concurrency: 4"
VERSION = "cv-none"  # a corpus version nothing was made for: a step that got past its config would fail otherwise
SYSTEM = {"kind": "callable", "target": "tests.fakes.rag_systems:unknown_ids"}
_JOBS = dg.Definitions(assets=[rag_answers, evaluation, ab_comparison], resources=RESOURCES,
                       jobs=[dg.define_asset_job(name, selection=name)
                             for name in ("rag_answers", "evaluation", "ab_comparison")])


def _failure(job: str, run_config: dict) -> str:
    """Why ``job`` failed on VERSION, having materialized nothing: its one failed step's description, or the error
    that stopped its resources being built."""
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(BUNDLED.corpus_versions.name, [VERSION])
        result = _JOBS.resolve_job_def(job).execute_in_process(partition_key=VERSION, instance=instance,
                                                               run_config=run_config, raise_on_error=False)
    assert not result.get_asset_materialization_events()
    (failed,) = [e for e in result.all_events if e.is_step_failure or e.is_resource_init_failure]
    if failed.is_resource_init_failure:  # in process every resource is built before the first step runs
        return failed.event_specific_data.error.message.strip()
    return failed.step_failure_data.user_failure_data.description


def _config(asset: str, **config: object) -> dict:
    return {"ops": {asset: {"config": config}}}


@pytest.mark.parametrize(("config", "problem"), [
    ({"alpha": 0}, ALPHA.format(0)),
    ({"alpha": 1}, ALPHA.format(1)),
    ({"max_judge_failure_rate": 5}, JUDGE_BUDGET.format(5)),
    ({"allowed_drops": {"faithfullness": 0.5}}, TYPO),
    ({"k": 0}, K.format(0)),
    ({"allowed_drops": {"faithfulness": 7}}, DROP),
], ids=["alpha-0", "alpha-1", "judge-budget-5", "allowed-drop-typo", "k-0", "allowed-drop-7"])
def test_the_evaluation_refuses_a_gate_setting_out_of_range_in_its_first_step(project_env: Path, config: dict,
                                                                              problem: str):
    assert _failure("evaluation", _config("evaluation", **config)) == f"invalid evaluation config: {problem}"


@pytest.mark.parametrize(("config", "problem"), [
    ({"alpha": 0}, ALPHA.format(0)),
    ({"max_judge_failure_rate": 5}, JUDGE_BUDGET.format(5)),
    ({"k": 0}, K.format(0)),
    ({"candidate": {"name": "c", "k": 0}},
     "candidate.k must be a whole number of at least 1, got 0; for example candidate.k: 5"),
    ({"faithfulness_bound": 7}, "faithfulness_bound must be in [0, 1], got 7; for example faithfulness_bound: 0.02"),
], ids=["alpha-0", "judge-budget-5", "k-0", "candidate-k-0", "faithfulness-bound-7"])
def test_ab_comparison_refuses_a_gate_setting_out_of_range_before_anything_answers(project_env: Path, config: dict,
                                                                                   problem: str):
    assert _failure("ab_comparison", _config("ab_comparison", **config)) == f"invalid ab_comparison config: {problem}"


@pytest.mark.parametrize(("config", "problem"), [
    ({"alpha": 0}, ALPHA.format(0)),
    ({"max_judge_failure_rate": 5}, JUDGE_BUDGET.format(5)),
    ({"allowed_drops": {"faithfullness": 0.5}}, PRODUCTION_TYPO),
    ({"allowed_drops": {"recall@5": 0.5}}, "allowed_drops, field recall@5: not a production metric; the production "
                                           "metrics: " + PRODUCTION_METRICS),
    ({"allowed_drops": {"faithfulness": 7}}, DROP),
], ids=["alpha-0", "judge-budget-5", "allowed-drop-typo", "allowed-drop-evaluation-only", "allowed-drop-7"])
def test_production_sample_refuses_a_gate_setting_out_of_range(project_env: Path, config: dict, problem: str):
    with dg.instance_for_test() as instance:
        result = dg.materialize([production_sample], partition_key="2026-11-20", instance=instance,
                                resources=RESOURCES, raise_on_error=False,
                                run_config=_config("production_sample", **config))
    (failed,) = [e for e in result.all_events if e.is_step_failure]
    assert failed.step_failure_data.user_failure_data.description == f"invalid production_sample config: {problem}"


@pytest.mark.parametrize(("setting", "problem"), [
    ({"k": 0}, K.format(0)), ({"k": -1}, K.format(-1)), ({"timeout_seconds": 0}, TIMEOUT),
    ({"max_concurrency": 0}, CONCURRENCY),
], ids=["k-0", "k-minus-1", "timeout-0", "concurrency-0"])
def test_the_rag_resource_refuses_a_limit_out_of_range_before_rag_answers_answers(project_env: Path, setting: dict,
                                                                                  problem: str):
    assert _failure("rag_answers", {"resources": {"rag": {"config": {**SYSTEM, **setting}}}}) == (
        f"rag_assets.errors.ConfigError: {problem}")


@pytest.mark.parametrize(("setting", "problem"), [
    ({"k": 0}, K.format(0)), ({"timeout_seconds": 0}, TIMEOUT),
], ids=["k-0", "timeout-0"])
def test_an_instance_refuses_a_system_limit_out_of_range_when_it_loads(tmp_path: Path, setting: dict, problem: str):
    component = RagEvaluation.model_validate({"name": "support", "system": {**SYSTEM, **setting}})
    with pytest.raises(ConfigError) as refused:
        component.resources(tmp_path)
    assert str(refused.value) == f"instance support: system: {problem}"


def test_the_cli_refuses_an_instance_with_a_system_limit_out_of_range_in_one_line_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Dagster wraps the instance's refusal in an error of its own while it builds the definitions: the CLI printed
    a traceback and exited 1."""
    project = tmp_path / "two_products"
    shutil.copytree(EXAMPLE, project)
    library = project / "two_products" / "defs" / "library" / "defs.yaml"
    library.write_text(library.read_text(encoding="utf-8").replace("    k: 3\n", "    k: 0\n"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(project))
    for module in [name for name in sys.modules if name.split(".")[0] == "two_products"]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setenv("RAG_ASSETS_CODE_LOCATION", "two_products.definitions")
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["run", "--instance", "library", "--no-production"]) == 2
    assert capsys.readouterr().err == f"error: instance library: system: {K.format(0)}\n"


@pytest.mark.parametrize("k", [0, -1])
def test_the_api_refuses_k_below_1_before_it_reads_the_golden_set(tmp_path: Path, k: int):
    with pytest.raises(ConfigError) as refused:
        rag_assets.evaluate(tmp_path / "missing.jsonl", _system, k=k)
    assert str(refused.value) == K.format(k)


def test_the_api_refuses_a_judge_failure_budget_out_of_range():
    result = rag_assets.evaluate(TWO_ITEMS, _system)
    for gate in (lambda: result.gates(max_judge_failure_rate=5), lambda: assert_quality(result, max_judge_failure_rate=5)):
        with pytest.raises(ConfigError) as refused:
            gate()
        assert str(refused.value) == JUDGE_BUDGET.format(5)


def test_a_whole_k_given_as_a_float_is_refused_showing_the_float_and_numpy_numbers_are_numbers(tmp_path: Path):
    """A tester's case: ``evaluate(k=5.0)`` was refused as "got 5", a value that reads as valid, and numpy's
    numbers (a k from an array, a budget from a mean) were refused as not numbers."""
    with pytest.raises(ConfigError) as refused:
        rag_assets.evaluate(tmp_path / "missing.jsonl", _system, k=5.0)
    assert str(refused.value) == "k must be a whole number of at least 1, got 5.0; for example k: 5"
    assert at_least_one("k", np.int64(5), 5) == 5
    assert share("max_judge_failure_rate", np.float32(0.2), 0.05) == np.float32(0.2)
    with pytest.raises(ConfigError) as refused:
        share("max_judge_failure_rate", True, 0.05)
    assert str(refused.value) == JUDGE_BUDGET.format("True")
