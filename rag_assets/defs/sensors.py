"""Sensors: the corpus sensor adds a partition per new corpus version and requests its snapshot.

Each reads its resources from its context (``Lifecycle.services``). A sensor called directly (as the tests do) is
also given its required resources as keywords (``**_called``), which a tick does not pass: they are ignored.
"""

import functools

import dagster as dg
from sqlalchemy.exc import SQLAlchemyError

from rag_assets.corpus.manifest import fingerprint
from rag_assets.app.inbox import ImportRun, scan_inbox
from rag_assets.app.production import production_waits
from rag_assets.app.production_logs import scan_logs
from rag_assets.curation.inbox_rounds import IMPORT_ATTEMPTS, Generated
from rag_assets.corpus.snapshot import plan_snapshot
from rag_assets.defs.assets.calibration import build_judge_calibration_job, judge_review_request
from rag_assets.defs.assets.corpus import build_corpus_snapshot
from rag_assets.app.curation_import import applied_files_digest, generated_versions
from rag_assets.defs.assets.curation import decisions_unrecorded
from rag_assets.defs.assets.production import ProductionSampleConfig, production_code_version
from rag_assets.defs.freshness import already_scored
from rag_assets.defs.jobs import build_curation_import_job, build_lifecycle_job, build_production_job
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.resources import StoreResource
from rag_assets.production.log_watch import plan_days, ready_days
from rag_assets.errors import RagAssetsError
from rag_assets.settings import current_settings


@functools.cache
def build_corpus_sensor(lifecycle: Lifecycle) -> dg.SensorDefinition:
    @dg.sensor(
        required_resource_keys=lifecycle.resource_keys("corpus", "store"),
        name=lifecycle.named("corpus_sensor"),
        target=[build_corpus_snapshot(lifecycle)],
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(30),
        description=(
            "Watches the corpus root. A stat-only fingerprint (paths, sizes, mtimes) is the cursor; when it "
            "moves, the changed files are hashed and, if that gives a corpus version with no partition yet, "
            "the partition is added and its snapshot requested in the same tick (run key = version id)."
        ),
    )
    def corpus_sensor(context: dg.SensorEvaluationContext, **_called: object) -> dg.SensorResult | dg.SkipReason:
        services = lifecycle.services(context)
        corpus, store = services.corpus, services.store
        config, root = corpus.chunker(), corpus.resolved_root()
        try:
            current = fingerprint(root, config)
            if current == context.cursor:
                return dg.SkipReason(f"corpus at {root} unchanged since the last tick")
            version = plan_snapshot(root, config, store.corpus()).version_id
        except RagAssetsError as exc:
            return dg.SkipReason(str(exc))
        if version in context.instance.get_dynamic_partitions(lifecycle.corpus_versions.name):
            return dg.SensorResult(skip_reason=f"corpus version {version} already has a partition", cursor=current)
        return dg.SensorResult(
            run_requests=[dg.RunRequest(partition_key=version, run_key=version, tags={"rag_assets/trigger": "corpus_change"})],
            dynamic_partitions_requests=[lifecycle.corpus_versions.build_add_request([version])],
            cursor=current,
        )

    return corpus_sensor


corpus_sensor = build_corpus_sensor(BUNDLED)


#: What reading the store raises when it is down or not this instance's: a sensor still ticks, and reads it later.
_STORE_DOWN = (SQLAlchemyError, RagAssetsError, ImportError)

_ENDED = (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.SUCCESS)


def _run_ended(instance: dg.DagsterInstance, run_key: str) -> tuple[bool, str | None]:
    """(whether the run of ``run_key`` has ended, its id); no run at all means the request was dropped: ended."""
    runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/run_key": run_key}), limit=1)
    return (True, None) if not runs else (runs[0].status in _ENDED, runs[0].run_id)


def _stored_versions(store: StoreResource, log: dg.DagsterLogManager) -> Generated:
    """Whether the store holds a corpus version's candidates; None for every version while it cannot be read: an
    empty set would say "not generated" and reject the review of a version without a partition yet."""
    try:
        return generated_versions(store).__contains__
    except _STORE_DOWN as exc:
        log.warning(f"the store cannot be read, so review files wait for a later tick: {exc}")
        return lambda version: None


def _import_request(run: ImportRun, lifecycle: Lifecycle) -> dg.RunRequest:
    """The run of ``run``: a judge review's calibration, or the import of a question review (config of the
    instance's curated_decisions op)."""
    tags = {"rag_assets/trigger": "curation_inbox", "rag_assets/attempt": str(run.state.attempts)}
    if run.judge_review:
        return judge_review_request(lifecycle, run.path, str(run.state.run_key), tags)
    return dg.RunRequest(
        run_key=run.state.run_key, partition_key=run.version, job_name=build_curation_import_job(lifecycle).name,
        tags=tags, run_config={"ops": {lifecycle.key("curated_decisions").to_python_identifier(): {
            "config": {"files": [run.path.name]}}}})


_IN_FLIGHT = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
              dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def _unrecorded_imports(instance: dg.DagsterInstance, store: StoreResource, lifecycle: Lifecycle,
                        versions: set[str]) -> list[dg.RunRequest]:
    """A curation_import run for each corpus version whose store applied review files that curated_decisions
    does not record: the run that imported them was killed after its commit, and the files are in processed/,
    where no tick sees them. The run imports nothing again (the inbox is empty or holds other files), records
    the applied files and builds the golden set. Its run key is the applied files' digest: once per state."""
    repo, job = store.curation(), build_curation_import_job(lifecycle).name
    requests = []
    for version in sorted(versions):
        if not repo.applied_files(version) or not decisions_unrecorded(
                instance, lifecycle.key("curated_decisions"), repo, version):
            continue
        running = instance.get_runs(dg.RunsFilter(job_name=job, statuses=_IN_FLIGHT,
                                                  tags={"dagster/partition": version}), limit=1)
        if not running:  # an import in flight records its files when it ends
            requests.append(dg.RunRequest(run_key=f"recover-{version}-{applied_files_digest(repo, version)}",
                                          partition_key=version, job_name=job,
                                          tags={"rag_assets/trigger": "curation_recovery"}))
    return requests


@functools.cache
def build_curation_inbox_sensor(lifecycle: Lifecycle) -> dg.SensorDefinition:
    @dg.sensor(
        required_resource_keys=lifecycle.resource_keys("curation", "store"),
        name=lifecycle.named("curation_inbox_sensor"),
        jobs=[build_curation_import_job(lifecycle), build_judge_calibration_job(lifecycle)],
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(15),
        description=(
            "Watches the curation inbox. Each new reviewed file (by content hash, the cursor) that names a known "
            "corpus version gets one run of curation_import for that partition (run key = file hash) once the store "
            "holds the version's candidates (what the import checks its ids against; until then it waits); a "
            "judge-review file (judge-review-<evaluation>) one run of judge_calibration_import. A file still in "
            f"the inbox after its run ended (store down, crash) is requested again, up to {IMPORT_ATTEMPTS} runs, then "
            "rejected. A corpus version whose store holds applied files that curated_decisions does not record (its "
            "import was killed after the commit) gets one run of curation_import that records them and builds the "
            "golden set. A file over the size limit (by its size, unread), one that names no known corpus version, a "
            "folder or another file type is moved to rejected/ with a report at once."
        ),
    )
    def curation_inbox_sensor(context: dg.SensorEvaluationContext, **_called: object) -> dg.SensorResult:
        services = lifecycle.services(context)
        known = set(context.instance.get_dynamic_partitions(lifecycle.corpus_versions.name))
        scan = scan_inbox(services.curation.folders(), services.curation.limits(), context.cursor, known,
                          functools.partial(_run_ended, context.instance), _stored_versions(services.store, context.log))
        requests = [_import_request(run, lifecycle) for run in scan.runs]
        try:
            recovered = _unrecorded_imports(context.instance, services.store, lifecycle, known)
        except _STORE_DOWN as exc:  # the store is down: the inbox still works
            context.log.warning(f"the store cannot be read, so imports killed after their commit are looked for on a "
                                f"later tick: {exc}")
            recovered = []
        if recovered:
            context.log.warning("applied review files that no curated_decisions records (an import killed after its "
                                f"commit): {', '.join(r.partition_key for r in recovered)}")
        if scan.retried:
            context.log.warning(f"import requested again (the last run ended with the file still in the inbox): "
                                f"{', '.join(scan.retried)}")
        if scan.rejected:
            context.log.warning(f"rejected without a run (not a review file, too big, no known corpus version, or "
                                f"failed {IMPORT_ATTEMPTS} times): {', '.join(scan.rejected)}")
        waiting = f"; waiting: {'; '.join(scan.waiting)}" if scan.waiting else ""
        return dg.SensorResult(run_requests=requests + recovered, cursor=scan.cursor,
                               skip_reason=None if requests or recovered else f"no new reviewed file in the inbox{waiting}")

    return curation_inbox_sensor


curation_inbox_sensor = build_curation_inbox_sensor(BUNDLED)


def _days_in_flight(instance: dg.DagsterInstance, job: str) -> set[str]:
    """The days whose production run has not ended: their scores are not in the store yet."""
    return {run.tags["dagster/partition"] for run in instance.get_runs(dg.RunsFilter(job_name=job, statuses=_IN_FLIGHT))
            if "dagster/partition" in run.tags}


@functools.cache
def build_production_logs_sensor(lifecycle: Lifecycle) -> dg.SensorDefinition:
    job = build_production_job(lifecycle)

    @dg.sensor(
        required_resource_keys=lifecycle.resource_keys("production_logs", "store", "corpus"),
        name=lifecycle.named("production_logs_sensor"),
        job=job,
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(60),
        description=(
            "Watches the production log folder. The cursor keeps each log file's content hash and, per day in it, a "
            "digest of that day's records; a new or changed file requests a production_sample run for each day whose "
            "records changed (run key = day + digests). Days that are not complete yet wait in the cursor until their "
            "partition exists; every day waits until a golden set exists (coverage is measured against it), and a "
            "day waits while a day of its drift baseline is still to be scored, as `rag-assets run` scores days "
            "oldest first."
        ),
    )
    def production_logs_sensor(context: dg.SensorEvaluationContext, **_called: object) -> dg.SensorResult:
        services = lifecycle.services(context)
        folder = services.production_logs.folder()
        scan = scan_logs(folder, context.cursor)
        for name, reason in scan.unreadable:
            context.log.warning(f"cannot read log file {name}: {reason}")
        try:
            waits = production_waits(services.store, services.corpus.resolved_root())
        except _STORE_DOWN as exc:  # the store is down: the days stay pending
            waits = f"the store cannot be read: {exc}"
        if waits and scan.cursor.pending:
            return dg.SensorResult(cursor=scan.cursor.dump(), skip_reason=f"{waits} (days waiting: "
                                   f"{', '.join(sorted(scan.cursor.pending))})")
        partitions = lifecycle.production_days
        first, last = partitions.get_first_partition_key(), partitions.get_last_partition_key()
        scored = already_scored(context.instance, lifecycle.key("production_sample"), production_code_version(lifecycle),
                                folder, ready_days(scan.cursor.pending, first, last))
        plan = plan_days(scan.cursor, first, last, scored, _days_in_flight(context.instance, job.name),
                         ProductionSampleConfig().baseline_days)
        if plan.too_early:
            context.log.warning(f"log days before the first production partition {first} are ignored: "
                                f"{', '.join(plan.too_early)} (set RAG_ASSETS_PRODUCTION_START earlier to score them)")
        held = sorted(day for day in scan.cursor.pending if last is not None and day <= last)
        incomplete = sorted(set(scan.cursor.pending) - set(held))
        waiting = "".join([f"; waiting for days to complete: {', '.join(incomplete)}" if incomplete else "",
                           f"; waiting for the days of their drift baseline to be scored: {', '.join(held)}"
                           if held else ""])
        return dg.SensorResult(
            run_requests=[dg.RunRequest(run_key=key, partition_key=day, tags={"rag_assets/trigger": "production_logs"})
                          for day, key in plan.requests],
            cursor=scan.cursor.dump(), skip_reason=None if plan.requests else f"no new production log records{waiting}")

    return production_logs_sensor


production_logs_sensor = build_production_logs_sensor(BUNDLED)


@functools.cache
def build_automation_sensor(lifecycle: Lifecycle) -> dg.AutomationConditionSensorDefinition:
    return dg.AutomationConditionSensorDefinition(
        lifecycle.named("rag_assets_automation"),
        target=lifecycle.groups(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(30),
        description="Evaluates the assets' automation conditions (the project's own, RUNNING out of the box): a new "
                    "corpus snapshot or an import flows on to candidates, golden set, RAG answers and evaluation, "
                    "never past a failed blocking check.",
    )


automation_sensor = build_automation_sensor(BUNDLED)


@functools.cache
def build_run_failure_alerts(lifecycle: Lifecycle) -> dg.SensorDefinition:
    def run_failure_alerts(context: dg.RunStatusSensorContext, **_called: object) -> None:
        from rag_assets.alerts import deliver, failure_alert

        failed, store = context.for_run_failure(), lifecycle.services(context).store
        run = failed.dagster_run
        errors = [event.event_specific_data.error.message.strip() for event in failed.get_step_failure_events()]
        alert = failure_alert(run.run_id, run.job_name, run.tags.get("dagster/partition"),
                              failed.failure_event.message or "run failed", errors)
        store.alerts().save(alert)
        status = deliver(alert, current_settings().alert_webhook)
        context.log.info(f"alert for run {run.run_id} recorded ({status})")

    # the class rather than ``dg.run_failure_sensor``, which takes no required_resource_keys
    return dg.RunStatusSensorDefinition(
        name=lifecycle.named("run_failure_alerts"),
        run_status=dg.DagsterRunStatus.FAILURE,
        run_status_sensor_fn=run_failure_alerts,
        required_resource_keys=lifecycle.resource_keys("store"),
        monitored_jobs=[build_lifecycle_job(lifecycle), build_curation_import_job(lifecycle),
                        build_production_job(lifecycle)] if lifecycle.name else None,
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(30),
        description="Writes an alert record for every failed run (job, partition, failed steps, first error) to the "
                    "store, and POSTs it to RAG_ASSETS_ALERT_WEBHOOK when that is set.",
    )


run_failure_alerts = build_run_failure_alerts(BUNDLED)
