"""``rag-assets``: run the lifecycle for the current corpus version and print a summary.

Runs go through Dagster (``execute_in_process`` on a persistent instance), so they show up in
``dagster dev`` when that is started with the same DAGSTER_HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from rag_assets.settings import CORPUS_ROOT_ENV, Settings

SAMPLE_REVIEWS = "sample"


def _instance(settings: Settings) -> dg.DagsterInstance:
    if not os.environ.get("DAGSTER_HOME"):
        home = settings.home / "dagster"
        home.mkdir(parents=True, exist_ok=True)
        config = home / "dagster.yaml"
        if not config.exists():
            config.write_text("telemetry:\n  enabled: false\n")
        os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.get()


def _shown(entry: dg.MetadataValue) -> str | None:
    value = entry.value
    if isinstance(entry, (dg.MarkdownMetadataValue, dg.JsonMetadataValue)) or not isinstance(value, (bool, int, float, str)):
        return None
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


# What the summary table shows of each asset: metadata labels, in order.
KEY_FACTS: dict[str, tuple[str, ...]] = {
    "corpus_snapshot": ("documents", "chunks", "documents_changed", "skipped_files"),
    "question_candidates": ("candidates", "new_candidates", "requeued_stale_items", "llm"),
    "curation_queue": ("pending",),
    "curated_decisions": ("files_applied", "files_rejected", "decisions"),
    "golden_set": ("golden_version", "items", "added", "removed", "changed", "stale"),
    "rag_answers": ("system", "answered", "errors", "declined", "latency_p95_ms"),
    "evaluation": ("faithfulness", "answer_relevance", "context_precision", "context_recall", "hit_rate@5",
                   "judge_calls_per_item", "thresholds"),
    "ab_comparison": ("recommendation", "current", "candidate", "delta_faithfulness", "delta_recall@5"),
    "production_sample": ("records", "sample_size", "bad_lines", "faithfulness", "context_precision",
                          "citation_accuracy", "drift_alerts", "coverage_gaps", "queued_candidates"),
}
#: How many of the newest logged days the CLI scores (each day's drift check compares with the days before).
PRODUCTION_DAYS_SHOWN = 7


def _checks(results: Sequence[dg.ExecuteInProcessResult]) -> list:
    return [e.event_specific_data for result in results for e in result.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"]


def summary_table(results: Sequence[dg.ExecuteInProcessResult]) -> str:
    """One line per materialized asset with the numbers a user looks for first, then the checks."""
    lines = [f"{'asset':<22}{'partition':<18}key facts", "-" * 100]
    for event in (e for result in results for e in result.get_asset_materialization_events()):
        materialization = event.step_materialization_data.materialization
        name = materialization.asset_key.to_user_string()
        facts = []
        for label in KEY_FACTS.get(name, ()):
            entry = materialization.metadata.get(label)
            shown = _shown(entry) if entry is not None else None
            if shown is not None:
                facts.append(f"{label}={float(shown):.3f}" if isinstance(entry.value, float) else f"{label}={shown}")
        lines.append(f"{name:<22}{materialization.partition or '':<18}{', '.join(facts)}")
    checks = _checks(results)
    failed = [c for c in checks if not c.passed]
    lines.append(f"\nchecks: {len(checks) - len(failed)} passed, {len(failed)} failed")
    lines.extend(f"  FAILED {c.asset_key.to_user_string()}.{c.check_name} [{c.partition}]: {c.description}" for c in failed)
    return "\n".join(lines)


def summary(results: Sequence[dg.ExecuteInProcessResult]) -> str:
    """A plain-text dump of every materialized asset's scalar metadata, and the check results."""
    lines = []
    for event in (e for result in results for e in result.get_asset_materialization_events()):
        materialization = event.step_materialization_data.materialization
        lines.append(f"\n{materialization.asset_key.to_user_string()} [{materialization.partition}]")
        lines.extend(f"  {label:<24} {shown}" for label, entry in materialization.metadata.items()
                     if (shown := _shown(entry)) is not None)
    checks = _checks(results)
    if checks:
        lines.append("\nchecks")
        lines.extend(f"  {c.asset_key.to_user_string() + '.' + c.check_name:<48} {'passed' if c.passed else 'FAILED'}"
                     for c in checks)
    return "\n".join(lines)


def _plan_version() -> str:
    from rag_assets.corpus.snapshot import plan_snapshot
    from rag_assets.defs.resources import RESOURCES

    corpus = RESOURCES["corpus"]
    return plan_snapshot(corpus.resolved_root(), corpus.chunker(), RESOURCES["store"].corpus()).version_id


def _stage_review(review: str | None, version: str, settings: Settings) -> None:
    """Put a reviewed file in the inbox before the run: the given one, or the bundled simulated review."""
    source = Path(review) if review else settings.curation_root / SAMPLE_REVIEWS / f"review-{version}.csv"
    if not source.exists():
        if review:
            raise FileNotFoundError(f"review file {source} does not exist")
        return
    inbox = settings.curation_root / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, inbox / source.name)
    kind = "reviewed file" if review else "simulated expert review (bundled)"
    print(f"{kind}: {source} -> {inbox / source.name}")


def _evaluation_config(thresholds: str | None, profile: str | None) -> dict:
    """The evaluation's gate settings for this run (printed, so nobody wonders which applied)."""
    if not (thresholds or profile):
        return {}
    config = {"thresholds_file": str(Path(thresholds).absolute())} if thresholds else {"profile": profile}
    print(f"evaluation thresholds: {config}")
    return {"ops": {"evaluation": {"config": config}}}


def _logged_days(folder: Path) -> list[str]:
    """The newest logged days that are production partitions already (complete UTC days), oldest first."""
    from rag_assets.defs.partitions import production_days
    from rag_assets.production.logs import read_logs

    first, last = production_days.get_first_partition_key(), production_days.get_last_partition_key()
    days = sorted({r.day.isoformat() for r in read_logs(folder).records})
    return [d for d in days if last is not None and first <= d <= last][-PRODUCTION_DAYS_SHOWN:]


def _run_production(instance: dg.DagsterInstance, settings: Settings) -> list[dg.ExecuteInProcessResult]:
    """Score the newest logged days of production traffic, one run per day as the log sensor would."""
    from rag_assets.definitions import defs

    days = _logged_days(settings.production_logs) if settings.production_logs.is_dir() else []
    if days:
        print(f"production logs: {settings.production_logs} -> days {days[0]} .. {days[-1]}")
    job = defs.resolve_job_def("production")
    return [job.execute_in_process(partition_key=day, instance=instance, raise_on_error=False,
                                   tags={"rag_assets/trigger": "cli"}) for day in days]


def _report_failures(results: Sequence[dg.ExecuteInProcessResult]) -> None:
    for result in results:
        for event in result.all_events:
            if event.is_step_failure:
                print(f"\nstep {event.step_key} failed: {event.step_failure_data.error.message.strip()}", file=sys.stderr)


def run(corpus: str | None, review: str | None, use_sample_review: bool, thresholds: str | None = None,
        profile: str | None = None, verbose: bool = False, production: bool = True) -> int:
    if corpus:
        os.environ[CORPUS_ROOT_ENV] = str(Path(corpus).absolute())
    from rag_assets.definitions import defs
    from rag_assets.defs.partitions import corpus_versions
    from rag_assets.defs.resources import RESOURCES
    from rag_assets.errors import RagAssetsError

    settings = Settings.from_env()
    try:
        version = _plan_version()
        if review or use_sample_review:
            _stage_review(review, version, settings)
    except (RagAssetsError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    instance = _instance(settings)
    if not instance.has_dynamic_partition(corpus_versions.name, version):
        instance.add_dynamic_partitions(corpus_versions.name, [version])
    result = defs.resolve_job_def("lifecycle").execute_in_process(
        partition_key=version, instance=instance, raise_on_error=False, tags={"rag_assets/trigger": "cli"},
        run_config=_evaluation_config(thresholds, profile))
    results = [result, *(_run_production(instance, settings) if production and result.success else [])]
    if verbose:
        print(summary(results))
    print("\n" + summary_table(results))
    print(f"\nstore: {RESOURCES['store'].describe()}\ndagster: DAGSTER_HOME={os.environ['DAGSTER_HOME']}")
    print("open the UI: DAGSTER_HOME=<that folder> dagster dev -w workspace.yaml")
    _report_failures(results)
    if not result.success:
        print(f"\nrun {result.run_id} failed for corpus version {version}. If the golden set is empty, review the "
              f"candidates in {settings.curation_root / 'outbox'} and drop the file in the inbox.", file=sys.stderr)
        return 1
    if not all(r.success for r in results):
        print("\na production_sample run failed (see above)", file=sys.stderr)
        return 1
    print(f"\nrun {result.run_id} succeeded for corpus version {version}"
          + (f"; {len(results) - 1} production days scored" if len(results) > 1 else ""))
    return 0


def simulate(out: str | None) -> int:
    """Decide the current version's review queue as the simulated expert would."""
    from rag_assets.curation.review_writer import write_review_files
    from rag_assets.curation.simulate import simulate_review

    settings = Settings.from_env()
    version = _plan_version()
    queue = settings.curation_root / "outbox" / f"review-{version}.jsonl"
    if not queue.exists():
        print(f"error: no review queue {queue}; run `rag-assets run --no-review` first", file=sys.stderr)
        return 2
    rows = simulate_review([json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines() if line.strip()])
    target = Path(out) if out else settings.curation_root / SAMPLE_REVIEWS / f"review-{version}.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_review_files(rows, target, target.with_suffix(".jsonl"))
    target.with_suffix(".jsonl").unlink()
    print(f"simulated review of {len(rows)} candidates written to {target}")
    return 0


def import_golden(path: str, file_format: str, chunks: str | None) -> int:
    """Import an existing golden set as accepted items pinned to the current corpus version."""
    from rag_assets.defs.resources import RESOURCES
    from rag_assets.golden.importers import map_external_items, read_anthropic_docs_dataset, read_ragas_testset
    from rag_assets.curation.inbox import file_sha256

    if file_format == "anthropic_docs" and not chunks:
        print("error: --chunks (the corpus chunks JSON) is needed for the anthropic_docs format", file=sys.stderr)
        return 2
    items = (read_anthropic_docs_dataset(Path(path), Path(chunks)) if file_format == "anthropic_docs"
             else read_ragas_testset(Path(path)))
    version = _plan_version()
    store = RESOURCES["store"]
    snapshot_chunks = store.corpus().snapshot_chunks(version)
    if not snapshot_chunks:
        print(f"error: corpus version {version} has no snapshot yet; run `rag-assets run` first", file=sys.stderr)
        return 2
    mapped, unmapped = map_external_items(items, snapshot_chunks)
    new = store.curation().import_items(mapped, version, file_format, Path(path).name, file_sha256(Path(path)))
    print(f"{len(items)} items read, {len(mapped)} mapped onto corpus {version}, {new} new golden items imported")
    for item, reason in unmapped:
        print(f"  not imported: {item.external_id}: {reason}", file=sys.stderr)
    print("materialize golden_set (or run `rag-assets run`) to make a golden-set version with them")
    return 0


def calibrate(path: str, embedder: str) -> int:
    """Print the configured judge's agreement with a labelled file (rag_assets.scoring.calibration)."""
    from rag_assets.defs.resources import RESOURCES
    from rag_assets.errors import RagAssetsError
    from rag_assets.scoring.calibration import calibrate as run_calibration

    try:
        report = run_calibration(Path(path), RESOURCES["llm"].judge_client(), embedder=embedder,
                                 cache=RESOURCES["store"].llm_cache())
    except RagAssetsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.markdown())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rag-assets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="run the lifecycle job on the corpus and print a summary")
    run_parser.add_argument("--corpus", help=f"corpus root (default: ${CORPUS_ROOT_ENV} or ./data/corpus)")
    run_parser.add_argument("--review", help="a reviewed file to import in this run")
    run_parser.add_argument("--no-review", action="store_true",
                            help="do not stage the bundled simulated review of the sample corpus")
    run_parser.add_argument("--thresholds", help="a thresholds file for the evaluation gates (YAML or JSON)")
    run_parser.add_argument("--verbose", action="store_true", help="print every asset's metadata, not just the summary")
    run_parser.add_argument("--no-production", action="store_true",
                            help="do not score the production logs (default folder: data/production_logs)")
    run_parser.add_argument("--profile", choices=["general", "high_stakes", "developer", "offline"],
                            help="a threshold profile (default: general with Claude as judge, offline without)")
    simulate_parser = commands.add_parser("simulate-review", help="decide the review queue as a simulated expert")
    simulate_parser.add_argument("--out", help="where to write the reviewed CSV (default: the bundled sample path)")
    import_parser = commands.add_parser("import-golden", help="import an existing golden set as accepted items")
    import_parser.add_argument("path")
    import_parser.add_argument("--format", required=True, choices=["anthropic_docs", "ragas"], dest="file_format")
    import_parser.add_argument("--chunks", help="anthropic_docs format: the corpus chunks JSON")
    calibrate_parser = commands.add_parser("calibrate", help="check the configured judge against labelled answers (JSONL)")
    calibrate_parser.add_argument("path")
    calibrate_parser.add_argument("--embedder", default="hashing", help="as the evaluation config's embedder")
    corpus_parser = commands.add_parser("corpus-from-json", help="turn a pre-chunked JSON corpus into a corpus folder")
    corpus_parser.add_argument("chunks_json")
    corpus_parser.add_argument("out_dir")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.corpus, args.review, not args.no_review, args.thresholds, args.profile, args.verbose,
                   not args.no_production)
    if args.command == "simulate-review":
        return simulate(args.out)
    if args.command == "import-golden":
        return import_golden(args.path, args.file_format, args.chunks)
    if args.command == "calibrate":
        return calibrate(args.path, args.embedder)
    from rag_assets.golden.importers import json_chunks_to_corpus

    written = json_chunks_to_corpus(Path(args.chunks_json), Path(args.out_dir))
    print(f"{len(written)} documents written to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
