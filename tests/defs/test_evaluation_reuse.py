"""Unchanged evaluation work is not done again: a shard with a kept outcome is not judged, and an
evaluation whose inputs are all the same is recorded again; any changed input is computed again."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
from sqlalchemy import update

from rag_assets.defs.assets.evaluation import FAILURE_BUDGET_CHECK, REGRESSION_CHECK, THRESHOLDS_CHECK, evaluation
from rag_assets.defs.assets.rag import rag_answers
from rag_assets.defs.freshness import outdated
from rag_assets.defs.resources import RESOURCES
from rag_assets.defs.reuse import DATA_VERSION_TAG
from rag_assets.shards import plan_shards
from rag_assets.store.engine import write_transaction
from rag_assets.store.tables import RagResultRow
from tests.defs.lifecycle import LifecycleRun, check_evaluations, metadata, step_errors
from tests.test_cli_bad_inputs import BAD_THRESHOLDS

PROBED = ("empty.yaml", "twice.yaml", "typo.yaml")  # one of each refusal: gates nothing, given twice, not a metric

SHARD_SIZE = 10
_JOBS = dg.Definitions(assets=[rag_answers, evaluation], resources=RESOURCES,
                       jobs=[dg.define_asset_job("evaluate", selection="evaluation")])
EVALUATE = _JOBS.resolve_job_def("evaluate")


def _evaluate(instance: dg.DagsterInstance, version: str, **config) -> dg.ExecuteInProcessResult:
    result = EVALUATE.execute_in_process(partition_key=version, instance=instance, raise_on_error=False,
                                         run_config={"ops": {"evaluation": {"config": {"shard_size": SHARD_SIZE,
                                                                                       **config}}}})
    assert result.success, step_errors(result)
    return result


def _judged(result: dg.ExecuteInProcessResult) -> list[str]:
    """The shards judged in this run (their mapping keys)."""
    return sorted(e.step_key.split("[")[1].rstrip("]") for e in result.all_events
                  if e.is_step_success and e.step_key.startswith("evaluation.judge_shard["))


def _data_version(result: dg.ExecuteInProcessResult) -> str:
    (event,) = result.get_asset_materialization_events()
    return event.step_materialization_data.materialization.tags[DATA_VERSION_TAG]


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, tuple]:
    return {name: (check.passed, check.severity, check.description, check.metadata)
            for name, check in check_evaluations(result).items()}


def test_an_unchanged_evaluation_is_recorded_again_and_new_thresholds_score_again_without_judging(
        lifecycle_run: LifecycleRun, tmp_path: Path):
    version = lifecycle_run.version
    repo = RESOURCES["store"].evaluations()
    with lifecycle_run.instance() as instance:
        lifecycle = lifecycle_run.result
        computed = metadata(lifecycle, "evaluation")
        all_shards = [s.key for s in plan_shards(computed["items"], SHARD_SIZE)]
        assert len(all_shards) == 5

        resharded = _evaluate(instance, version)  # new shards are judged; the evaluation's inputs are the same
        assert _judged(resharded) == all_shards
        assert metadata(resharded, "evaluation")["reused_evaluation"] == computed["evaluation_id"]

        again = _evaluate(instance, version)
        assert _judged(again) == []
        reused = metadata(again, "evaluation")
        assert reused["reused_evaluation"] == reused["evaluation_id"] == computed["evaluation_id"]
        assert (reused["llm_calls"], reused["llm_cache_hits"], reused["llm_cache_misses"]) == (0, 0, 0)
        assert set(reused) == set(computed) - {"llm_estimated_cost_usd"} | {"reused_evaluation"}  # nothing estimated
        unchanged = {k for k in computed if not k.startswith("llm")}
        assert {k: reused[k] for k in unchanged} == {k: computed[k] for k in unchanged}
        assert _data_version(again) == computed["evaluation_id"]
        assert _checks(again) == {name: check for name, check in _checks(lifecycle).items()
                                  if name in (THRESHOLDS_CHECK, REGRESSION_CHECK, FAILURE_BUDGET_CHECK)}
        assert len(_checks(again)) == 3
        assert [h.evaluation_id for h in repo.history([version])] == [computed["evaluation_id"]]

        thresholds = tmp_path / "thresholds.json"
        thresholds.write_text(json.dumps({"faithfulness": 0.0}))
        stricter = _evaluate(instance, version, thresholds_file=str(thresholds))
        assert _judged(stricter) == []
        scored = metadata(stricter, "evaluation")
        assert "reused_evaluation" not in scored and scored["evaluation_id"] != computed["evaluation_id"]
        assert (scored["llm_calls"], scored["llm_cache_hits"], scored["llm_cache_misses"]) == (
            computed["llm_calls"], computed["llm_calls"], 0)
        assert check_evaluations(stricter)["evaluation_thresholds"].description == "all 1 metrics at or above their minimum"
        assert repo.item_values(scored["evaluation_id"]) == repo.item_values(computed["evaluation_id"])

        thresholds.write_text(json.dumps({"faithfulness": 0.0, "answer_relevance": 0.0}))  # same file, new content
        rewritten = _evaluate(instance, version, thresholds_file=str(thresholds))
        assert "reused_evaluation" not in metadata(rewritten, "evaluation")
        assert check_evaluations(rewritten)["evaluation_thresholds"].description == (
            "all 2 metrics at or above their minimum")
        assert len(repo.history([version])) == 3


def test_a_changed_answer_or_item_judges_its_shard_again_and_a_new_judge_config_every_shard(
        lifecycle_run: LifecycleRun):
    version = lifecycle_run.version
    store = RESOURCES["store"]
    with lifecycle_run.instance() as instance:
        first = metadata(_evaluate(instance, version, severity="WARN"), "evaluation")  # worse answers may fail gates
        run = store.rag().latest_run(version)
        items = store.golden().version_items(run.golden_version)
        answered, restated = items[13], items[37]  # in shard_0001 and shard_0003

        table = RagResultRow.__table__
        with write_transaction(store.engine()) as conn:
            conn.execute(update(table).where((table.c.run_id == run.run_id) & (table.c.item_id == answered.item_id))
                         .values(answer="Something else entirely."))
        changed = _evaluate(instance, version, severity="WARN")
        assert _judged(changed) == ["shard_0001"]
        meta = metadata(changed, "evaluation")
        assert "reused_evaluation" not in meta and meta["evaluation_id"] != first["evaluation_id"]
        before, _ = store.evaluations().item_values(first["evaluation_id"])
        after, _ = store.evaluations().item_values(meta["evaluation_id"])
        key = (answered.item_id, answered.revision)
        assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
        assert after[key] != before[key]

        store.golden().set_reference_statements({(restated.item_id, restated.revision): ["A new reference statement."]})
        assert _judged(_evaluate(instance, version, severity="WARN")) == ["shard_0003"]

        assert _judged(_evaluate(instance, version, severity="WARN", k=3)) == [s.key for s in plan_shards(len(items), SHARD_SIZE)]


def test_a_materialization_is_outdated_when_missing_or_its_code_or_an_input_it_read_changed():
    tags = {"dagster/code_version": "v2"}
    assert outdated(None, "v2", {}), "never materialized"
    assert not outdated(tags, "v2", {"up": ("a", "a")})
    assert outdated(tags, "v3", {"up": ("a", "a")}), "new code version"
    assert not outdated(tags, None, {}), "an asset without a code version never counts as changed code"
    assert outdated(tags, "v2", {"up": ("a", "b")}), "the upstream asset has a new data version"
    assert outdated(tags, "v2", {"up": (None, "b")}), "the upstream event it read is unknown"


def test_a_thresholds_file_the_cli_refuses_fails_the_evaluation_before_it_judges_with_the_same_problem(
        lifecycle_run: LifecycleRun, tmp_path: Path):
    """Run config (or an instance's thresholds_file) reaches the asset without the CLI's door: an empty file gated
    nothing and the evaluation passed. The plan step refuses it, naming the problem the CLI and the API name."""
    version = lifecycle_run.version
    repo = RESOURCES["store"].evaluations()
    with lifecycle_run.instance() as instance:
        before = [h.evaluation_id for h in repo.history([version])]
        for name, content, problem in [case for case in BAD_THRESHOLDS if case[0] in PROBED]:
            path = tmp_path / name
            path.write_text(content, encoding="utf-8")
            result = EVALUATE.execute_in_process(
                partition_key=version, instance=instance, raise_on_error=False,
                run_config={"ops": {"evaluation": {"config": {"thresholds_file": str(path)}}}})
            (failure,) = [e.step_failure_data.user_failure_data for e in result.all_events if e.is_step_failure]
            assert failure.description == "invalid evaluation config: " + problem.format(file=f"thresholds file {path}")
            assert _judged(result) == [] and result.get_asset_materialization_events() == []
        assert [h.evaluation_id for h in repo.history([version])] == before, "no new evaluation in the store"
