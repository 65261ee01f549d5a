"""Helpers that drive the lifecycle through Dagster the way a deployment would (jobs, sensors)."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from rag_assets.corpus.snapshot import plan_snapshot
from rag_assets.definitions import defs
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import RESOURCES
from rag_assets.defs.sensors import curation_inbox_sensor
from rag_assets.settings import Settings
from tests.conftest import SharedCheckout


def current_version() -> str:
    corpus = RESOURCES["corpus"]
    return plan_snapshot(corpus.resolved_root(), corpus.chunker(), RESOURCES["store"].corpus()).version_id


def run_job(instance: dg.DagsterInstance, job: str, version: str, run_config: dict | None = None,
            expect_success: bool = True, tags: dict[str, str] | None = None) -> dg.ExecuteInProcessResult:
    if not instance.has_dynamic_partition(corpus_versions.name, version):
        instance.add_dynamic_partitions(corpus_versions.name, [version])
    result = defs.resolve_job_def(job).execute_in_process(partition_key=version, instance=instance,
                                                          run_config=run_config or {}, raise_on_error=False,
                                                          tags=tags)
    assert result.success == expect_success, step_errors(result)
    return result


def step_errors(result: dg.ExecuteInProcessResult) -> list[str]:
    """The error message of every step that failed in ``result``, in event order."""
    return [e.step_failure_data.error.message for e in result.all_events if e.is_step_failure]


def failed_step_error(result: dg.ExecuteInProcessResult) -> str:
    """The error of the one step that failed ``result``'s run, its run id written as RUN."""
    assert not result.success
    (error,) = step_errors(result)
    return error.replace(result.run_id, "RUN")


def metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if materialization.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in materialization.metadata.items()}
    raise AssertionError(f"{asset} was not materialized")


def data_version(result: dg.ExecuteInProcessResult, asset: str) -> str:
    """The data version ``asset``'s materialization in ``result`` recorded."""
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if materialization.asset_key.to_user_string() == asset:
            return materialization.tags["dagster/data_version"]
    raise AssertionError(f"{asset} was not materialized")


def outbox_rows(version: str) -> list[dict]:
    path = Settings.from_env().curation_root / "outbox" / f"review-{version}.csv"
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def review_as_expert(version: str, name: str, decide: Callable[[int, dict], dict | None]) -> Path:
    """Open the outbox CSV as a spreadsheet would, fill decision cells, save it into the inbox.

    Rows ``decide`` answers None for are deleted on purpose, so (the documented rule) the
    rows_written column is cleared when any row is left out."""
    source = Settings.from_env().curation_root / "outbox" / f"review-{version}.csv"
    with source.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    decided = []
    for index, row in enumerate(rows):
        change = decide(index, row)
        if change is not None:
            decided.append({**row, **change})
    if len(decided) < len(rows):
        decided = [{**row, "rows_written": ""} for row in decided]
    target = Settings.from_env().curation_root / "inbox" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(decided)
    return target


def inbox_tick(instance: dg.DagsterInstance, cursor: str | None = None) -> dg.SensorResult:
    # entered and left like the daemon does: a context left open keeps its instance registered as the
    # process's definitions-state storage after the instance is gone, breaking later loads
    with dg.build_sensor_context(instance_ref=instance.get_ref(), definitions=defs, resources=defs.resources,
                                 cursor=cursor) as context:
        return curation_inbox_sensor(context)


def run_sensor_requests(instance: dg.DagsterInstance, result: dg.SensorResult) -> list[dg.ExecuteInProcessResult]:
    return [run_job(instance, "curation_import", request.partition_key, request.run_config)
            for request in result.run_requests]


def golden_export(version: str, number: int) -> list[dict]:
    path = Settings.from_env().home / "golden" / version / f"golden-v{number}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def stage_sample_review(version: str) -> None:
    """Drop the bundled simulated review of the sample corpus into the inbox."""
    from tests.conftest import PROJECT_ROOT

    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT_ROOT / "data" / "curation" / "sample" / f"review-{version}.csv", inbox / f"review-{version}.csv")


def check_evaluations(result: dg.ExecuteInProcessResult) -> dict:
    """Check name -> its evaluation (passed, metadata) in a run."""
    return {e.event_specific_data.check_name: e.event_specific_data for e in result.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"}


@dataclass(frozen=True)
class LifecycleRun:
    """What the lifecycle job's run on the sample with its bundled review left: the corpus version, the run's result
    (its events, kept in memory) and the folder of the Dagster instance it ran in."""

    version: str
    result: dg.ExecuteInProcessResult
    instance_dir: Path

    def instance(self):
        """The instance the run was recorded in, opened again (a context manager, as ``dg.instance_for_test``)."""
        return dg.instance_for_test(temp_dir=str(self.instance_dir))


def bundled_lifecycle(root: Path) -> SharedCheckout:
    """A checkout at ``root`` where the bundled review was staged and the lifecycle job ran; ``made`` is its
    ``LifecycleRun``. The instance lives in the checkout, so it is put back with it."""
    def run(home: Path) -> LifecycleRun:
        version = current_version()
        stage_sample_review(version)
        instance_dir = home.parent / "dagster"
        instance_dir.mkdir()
        with dg.instance_for_test(temp_dir=str(instance_dir)) as instance:
            result = run_job(instance, "lifecycle", version)
        return LifecycleRun(version, result, instance_dir)

    return SharedCheckout(root, run, curation_sample=False)


def build_golden_set(instance: dg.DagsterInstance) -> str:
    """Snapshot the corpus and build its golden set from the bundled review (nothing downstream of it); its version."""
    version = current_version()
    stage_sample_review(version)
    instance.add_dynamic_partitions(corpus_versions.name, [version])
    selection = [dg.AssetKey(name) for name in ("corpus_snapshot", "question_candidates", "curated_decisions",
                                                "golden_set")]
    result = defs.resolve_job_def("lifecycle").execute_in_process(partition_key=version, instance=instance,
                                                                  asset_selection=selection, raise_on_error=False)
    assert result.success, step_errors(result)
    return version


def candidates_generated(version: str) -> None:
    """Store one question candidate of ``version`` (what the inbox sensor waits for), without generating any: for
    tests of the sensor's routing, not of the import."""
    from rag_assets.generation.models import Candidate

    RESOURCES["store"].candidates().save([Candidate(
        candidate_id="q-000000000001", question="What is stored?", reference_answer="One candidate.",
        question_type="factual", relevant_chunks=(), source_chunks=(), corpus_version=version, provider="test",
        model="test", prompt_ref="test")])
