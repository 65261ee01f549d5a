"""corpus_snapshot through Dagster: materialize a partition and read what the UI would show."""

from pathlib import Path

import dagster as dg
import pytest

from rag_assets.definitions import defs
from rag_assets.defs.assets.corpus import corpus_snapshot
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import RESOURCES, CorpusResource


def _current_version() -> str:
    from rag_assets.corpus.snapshot import plan_snapshot

    return plan_snapshot(RESOURCES["corpus"].resolved_root(), RESOURCES["corpus"].chunker(), RESOURCES["store"].corpus()).version_id


def test_materializing_a_partition_stores_the_snapshot_with_metadata_and_data_version(project_env: Path):
    version = _current_version()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [version])
        result = dg.materialize([corpus_snapshot], partition_key=version, instance=instance, resources=RESOURCES)
        assert result.success
        event = instance.get_latest_materialization_event(corpus_snapshot.key)
        metadata = event.asset_materialization.metadata
        assert metadata["corpus_version"].value == version
        assert metadata["documents"].value == 49
        assert metadata["documents_added"].value == 49
        assert metadata["skipped_files"].value == 0
        assert metadata["chunks"].value == metadata["chunks_added"].value > 0
        assert "| v1/limits.md | added |" in metadata["diff"].value
        assert event.asset_materialization.tags["dagster/data_version"] == version
    assert (project_env / "rag_assets.db").exists(), "the store lives in RAG_ASSETS_HOME by default"


def test_a_partition_whose_corpus_moved_on_fails_with_the_reason(project_env: Path):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, ["cv-000000000000"])
        result = dg.materialize([corpus_snapshot], partition_key="cv-000000000000", instance=instance,
                                resources=RESOURCES, raise_on_error=False)
        assert not result.success
        failure = next(e for e in result.all_events if e.is_step_failure)
        assert "not cv-000000000000: it changed after this partition was created" in failure.step_failure_data.error.message


def test_a_missing_corpus_root_fails_the_step_naming_the_path(project_env: Path, tmp_path: Path):
    missing = tmp_path / "no-such-corpus"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, ["cv-000000000001"])
        result = dg.materialize([corpus_snapshot], partition_key="cv-000000000001", instance=instance, raise_on_error=False,
                                resources={**RESOURCES, "corpus": CorpusResource(root=str(missing))})
        failure = next(e for e in result.all_events if e.is_step_failure)
        assert f"corpus root {missing} does not exist" in failure.step_failure_data.error.message


def test_definitions_load_and_hold_the_lifecycle_job():
    dg.Definitions.validate_loadable(defs)
    job = defs.resolve_job_def("lifecycle")
    assert job.partitions_def == corpus_versions


@pytest.mark.slow
def test_workspace_validates_with_the_dagster_cli():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    dagster = Path(sys.executable).with_name("dagster")
    done = subprocess.run([str(dagster), "definitions", "validate", "-w", "workspace.yaml"], cwd=root,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "All code locations passed validation" in done.stderr + done.stdout
