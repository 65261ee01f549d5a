"""``rag-assets``: run the lifecycle job for the current corpus version and print a summary.

The run goes through Dagster (``execute_in_process`` on a persistent instance), so it shows up in
``dagster dev`` when that is started with the same DAGSTER_HOME.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from rag_assets.settings import CORPUS_ROOT_ENV, Settings


def _instance(settings: Settings) -> dg.DagsterInstance:
    if not os.environ.get("DAGSTER_HOME"):
        home = settings.home / "dagster"
        home.mkdir(parents=True, exist_ok=True)
        config = home / "dagster.yaml"
        if not config.exists():
            config.write_text("telemetry:\n  enabled: false\n")
        os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.get()


def _metadata_value(entry: dg.MetadataValue) -> str | None:
    value = entry.value
    if isinstance(value, bool) or isinstance(value, (int, float, str)) and not isinstance(entry, dg.MarkdownMetadataValue):
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
    return None


def summary(result: dg.ExecuteInProcessResult) -> str:
    """A plain-text table of every materialized asset's scalar metadata."""
    lines = []
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        lines.append(f"\n{materialization.asset_key.to_user_string()} [{materialization.partition}]")
        for label, entry in materialization.metadata.items():
            shown = _metadata_value(entry)
            if shown is not None:
                lines.append(f"  {label:<24} {shown}")
    return "\n".join(lines)


def run(corpus: str | None) -> int:
    if corpus:
        os.environ[CORPUS_ROOT_ENV] = str(Path(corpus).absolute())
    from rag_assets.corpus.snapshot import plan_snapshot
    from rag_assets.definitions import defs
    from rag_assets.defs.partitions import corpus_versions
    from rag_assets.defs.resources import RESOURCES
    from rag_assets.errors import RagAssetsError

    settings = Settings.from_env()
    corpus_resource, store = RESOURCES["corpus"], RESOURCES["store"]
    try:
        version = plan_snapshot(corpus_resource.resolved_root(), corpus_resource.chunker(), store.corpus()).version_id
    except RagAssetsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    instance = _instance(settings)
    if not instance.has_dynamic_partition(corpus_versions.name, version):
        instance.add_dynamic_partitions(corpus_versions.name, [version])
    result = defs.resolve_job_def("lifecycle").execute_in_process(
        partition_key=version, instance=instance, raise_on_error=False, tags={"rag_assets/trigger": "cli"}
    )
    print(summary(result))
    print(f"\nstore: {store.describe()}\ndagster: DAGSTER_HOME={os.environ['DAGSTER_HOME']}")
    print("open the UI: DAGSTER_HOME=<that folder> dagster dev -w workspace.yaml")
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                print(f"\nstep {event.step_key} failed: {event.step_failure_data.error.message.strip()}", file=sys.stderr)
        return 1
    print(f"\nrun {result.run_id} succeeded for corpus version {version}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rag-assets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run the lifecycle job on the corpus and print a summary")
    run_parser.add_argument("--corpus", help=f"corpus root (default: ${CORPUS_ROOT_ENV} or ./data/corpus)")
    args = parser.parse_args(argv)
    return run(args.corpus)


if __name__ == "__main__":
    sys.exit(main())
