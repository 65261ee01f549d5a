"""The corpus sensor, evaluated as Dagster evaluates it: build_sensor_context with the real defs."""

from pathlib import Path

import dagster as dg

from rag_assets.definitions import defs
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.sensors import corpus_sensor


def _tick(instance: dg.DagsterInstance, cursor: str | None) -> dg.SensorResult | dg.SkipReason:
    """One tick with the resources the code location gives the sensor (the defs' own)."""
    # entered and left like the daemon does: a context left open keeps its instance registered as the
    # process's definitions-state storage after the instance is gone, breaking later loads
    with dg.build_sensor_context(instance_ref=instance.get_ref(), definitions=defs, resources=defs.resources,
                                 cursor=cursor) as context:
        return corpus_sensor(context)


def _apply(instance: dg.DagsterInstance, result: dg.SensorResult) -> None:
    """Add the requested partitions, as the daemon does after a tick."""
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))


def test_a_new_corpus_adds_one_partition_and_requests_one_run_then_nothing(project_env: Path, sample_corpus: Path):
    with dg.instance_for_test() as instance:
        first = _tick(instance, None)
        assert isinstance(first, dg.SensorResult)
        assert len(first.run_requests) == 1 and len(first.dynamic_partitions_requests) == 1
        version = first.run_requests[0].partition_key
        assert version.startswith("cv-")
        assert first.run_requests[0].run_key == version
        assert list(first.dynamic_partitions_requests[0].partition_keys) == [version]
        _apply(instance, first)

        unchanged = _tick(instance, first.cursor)
        assert isinstance(unchanged, dg.SkipReason)
        assert instance.get_dynamic_partitions(corpus_versions.name) == [version]

        (sample_corpus / "v2" / "limits.md").write_text(
            (sample_corpus / "v2" / "limits.md").read_text() + "\nA new paragraph about limits.\n")
        changed = _tick(instance, first.cursor)
        assert isinstance(changed, dg.SensorResult) and len(changed.run_requests) == 1
        new_version = changed.run_requests[0].partition_key
        assert new_version != version
        _apply(instance, changed)
        assert instance.get_dynamic_partitions(corpus_versions.name) == [version, new_version]


def test_a_touched_file_moves_the_cursor_but_requests_nothing(project_env: Path, sample_corpus: Path):
    import os

    with dg.instance_for_test() as instance:
        first = _tick(instance, None)
        _apply(instance, first)
        path = sample_corpus / "v1" / "limits.md"
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
        touched = _tick(instance, first.cursor)
        assert isinstance(touched, dg.SensorResult)
        assert not touched.run_requests and not touched.dynamic_partitions_requests
        assert touched.cursor != first.cursor


def test_a_missing_corpus_root_is_a_skip_with_the_reason(project_env: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("RAG_ASSETS_CORPUS_ROOT", str(tmp_path / "gone"))
    with dg.instance_for_test() as instance:
        result = _tick(instance, None)
        assert isinstance(result, dg.SkipReason)
        assert "gone does not exist" in result.skip_message


def test_the_sensor_starts_running():
    assert corpus_sensor.default_status == dg.DefaultSensorStatus.RUNNING
