"""Sensors: the corpus sensor adds a partition per new corpus version and requests its snapshot."""

import functools
import json

import dagster as dg
from sqlalchemy.exc import SQLAlchemyError

from rag_assets.corpus.manifest import fingerprint
from rag_assets.corpus.models import sha256_hex
from rag_assets.curation.inbox import (declared_corpus_version, file_sha256, inbox_files, inbox_sha256, reject_file,
                                     reject_oversized, reject_unsupported, unsupported_entries)
from rag_assets.curation.models import ReviewProblem, excerpt
from rag_assets.corpus.snapshot import plan_snapshot
from rag_assets.calibration.review_file import is_judge_review
from rag_assets.defs.assets.calibration import build_judge_calibration_job, judge_review_request
from rag_assets.defs.assets.corpus import build_corpus_snapshot
from rag_assets.defs.assets.curation import applied_files_digest, decisions_unrecorded
from rag_assets.defs.freshness import already_scored
from rag_assets.defs.jobs import build_curation_import_job, build_lifecycle_job, build_production_job
from rag_assets.defs.lifecycle import BUNDLED, Lifecycle
from rag_assets.defs.resources import CorpusResource, CurationResource, ProductionLogsResource, StoreResource
from rag_assets.production.logs import file_days, log_files
from rag_assets.errors import RagAssetsError
from rag_assets.settings import current_settings


@functools.cache
def build_corpus_sensor(lifecycle: Lifecycle) -> dg.SensorDefinition:
    @dg.sensor(
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
    @lifecycle.keyed
    def corpus_sensor(
        context: dg.SensorEvaluationContext, corpus: CorpusResource, store: StoreResource
    ) -> dg.SensorResult | dg.SkipReason:
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


CURSOR_MEMORY = 2000
#: How many runs one inbox file gets: a run that fails (store down, crash) leaves the file in the
#: inbox, and a later tick requests it again until this many have failed; then it is rejected.
IMPORT_ATTEMPTS = 3
_ENDED = (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.SUCCESS)


def _inbox_cursor(raw: str | None) -> dict[str, dict]:
    """file hash -> {"requests": runs ever requested, "attempts": runs in the current round, "run_key": the
    last one, None once the round ended in a rejection}; an old cursor (a list of hashes) had one request each."""
    loaded = json.loads(raw) if raw else {}
    if isinstance(loaded, list):
        return {digest: {"requests": 1, "attempts": 1, "run_key": digest} for digest in loaded}
    return loaded


def _run_ended(instance: dg.DagsterInstance, run_key: str) -> tuple[bool, str | None]:
    """(whether the run of ``run_key`` has ended, its id); no run at all means the request was dropped: ended."""
    runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/run_key": run_key}), limit=1)
    return (True, None) if not runs else (runs[0].status in _ENDED, runs[0].run_id)


def _import_request(path, digest: str, version: str | None, state: dict, attempts: int,
                    lifecycle: Lifecycle) -> dg.RunRequest:
    """A run for ``path``: a judge review's calibration, or the import of a question review (config of the
    instance's curated_decisions op); run keys stay unique per file hash (Dagster runs a run key once)."""
    number = state.get("requests", 0) + 1
    state.update(requests=number, attempts=attempts, run_key=digest if number == 1 else f"{digest}:{number}")
    tags = {"rag_assets/trigger": "curation_inbox", "rag_assets/attempt": str(attempts)}
    if is_judge_review(path):
        return judge_review_request(lifecycle, path, state["run_key"], tags)
    return dg.RunRequest(
        run_key=state["run_key"], partition_key=version, job_name=build_curation_import_job(lifecycle).name, tags=tags,
        run_config={"ops": {lifecycle.key("curated_decisions").to_python_identifier(): {
            "config": {"files": [path.name]}}}})


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
        name=lifecycle.named("curation_inbox_sensor"),
        jobs=[build_curation_import_job(lifecycle), build_judge_calibration_job(lifecycle)],
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(15),
        description=(
            "Watches the curation inbox. Each new reviewed file (by content hash, the cursor) that names a known "
            "corpus version gets one run of curation_import for that partition (run key = file hash); a judge-review "
            "file (judge-review-<evaluation>) one run of judge_calibration_import. A file still in "
            f"the inbox after its run ended (store down, crash) is requested again, up to {IMPORT_ATTEMPTS} runs, then "
            "rejected. A corpus version whose store holds applied files that curated_decisions does not record (its "
            "import was killed after the commit) gets one run of curation_import that records them and builds the "
            "golden set. A file over the size limit (by its size, unread), one that names no known corpus version, a "
            "folder or another file type is moved to rejected/ with a report at once."
        ),
    )
    @lifecycle.keyed
    def curation_inbox_sensor(context: dg.SensorEvaluationContext, curation: CurationResource,
                              store: StoreResource) -> dg.SensorResult:
        folders = curation.folders()
        seen = _inbox_cursor(context.cursor)
        known = set(context.instance.get_dynamic_partitions(lifecycle.corpus_versions.name))
        requests, rejected, retried = [], [], []
        for entry in unsupported_entries(folders.inbox):
            reject_unsupported(entry, folders)
            rejected.append(entry.name)
        for path in inbox_files(folders.inbox):
            if reject_oversized(path, folders, curation.limits()) is not None:
                rejected.append(path.name)
                continue
            try:
                digest = inbox_sha256(path)
            except OSError:  # gone, or swapped for a link, since the listing: the next tick sees what is there
                continue
            judge_review = is_judge_review(path)
            version = None if judge_review else declared_corpus_version(path)
            state = seen.setdefault(digest, {})
            if state.get("run_key"):
                ended, run_id = _run_ended(context.instance, state["run_key"])
                if not ended:
                    continue
                if state["attempts"] >= IMPORT_ATTEMPTS:
                    reject_file(path, folders, digest, [ReviewProblem(None, None, (
                        f"the import failed {state['attempts']} times (last run: {run_id or 'never started'}); nothing "
                        "was applied. Fix the cause (is the store up?) and drop the file in the inbox again"))])
                    state.update(attempts=0, run_key=None)
                    rejected.append(path.name)
                    continue
                requests.append(_import_request(path, digest, version, state, state["attempts"] + 1, lifecycle))
                retried.append(path.name)
            elif judge_review or version in known:
                requests.append(_import_request(path, digest, version, state, 1, lifecycle))
            else:
                problem = (f"names corpus version {excerpt(version)}, which has no partition (known: {', '.join(sorted(known)) or 'none'})"
                           if version else "names no corpus version (neither in its file name nor in a corpus_version column)")
                reject_file(path, folders, digest, [ReviewProblem(None, "corpus_version", problem)])
                rejected.append(path.name)
        try:
            recovered = _unrecorded_imports(context.instance, store, lifecycle, known)
        except (SQLAlchemyError, RagAssetsError, ImportError) as exc:  # the store is down: the inbox still works
            context.log.warning(f"the store cannot be read, so imports killed after their commit are looked for on a "
                                f"later tick: {exc}")
            recovered = []
        if recovered:
            context.log.warning("applied review files that no curated_decisions records (an import killed after its "
                                f"commit): {', '.join(r.partition_key for r in recovered)}")
            requests.extend(recovered)
        if retried:
            context.log.warning(f"import requested again (the last run ended with the file still in the inbox): "
                                f"{', '.join(retried)}")
        if rejected:
            context.log.warning(f"rejected without a run (not a review file, too big, no known corpus version, or "
                                f"failed {IMPORT_ATTEMPTS} times): {', '.join(rejected)}")
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(dict(list(seen.items())[-CURSOR_MEMORY:])),
                               skip_reason=None if requests else "no new reviewed file in the inbox")

    return curation_inbox_sensor


curation_inbox_sensor = build_curation_inbox_sensor(BUNDLED)


@functools.cache
def build_production_logs_sensor(lifecycle: Lifecycle) -> dg.SensorDefinition:
    @dg.sensor(
        name=lifecycle.named("production_logs_sensor"),
        job=build_production_job(lifecycle),
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(60),
        description=(
            "Watches the production log folder. The cursor keeps each log file's content hash and, per day in it, a "
            "digest of that day's records; a new or changed file requests a production_sample run for each day whose "
            "records changed (run key = day + digests). Days that are not complete yet wait in the cursor until their "
            "partition exists."
        ),
    )
    @lifecycle.keyed
    def production_logs_sensor(context: dg.SensorEvaluationContext, production_logs: ProductionLogsResource) -> dg.SensorResult:
        cursor = json.loads(context.cursor) if context.cursor else {"files": {}, "pending": {}}
        files, pending = cursor["files"], cursor["pending"]
        per_file = None  # the folder's day index, read once a file changed
        for path in log_files(production_logs.folder()):
            try:
                digest = file_sha256(path)
            except OSError as exc:  # removed or unreadable between listing and reading: look again next tick
                context.log.warning(f"cannot read log file {path.name}: {exc.strerror or exc}")
                continue
            if files.get(path.name, {}).get("sha") == digest:
                continue
            before = files.get(path.name, {}).get("days", {})
            per_file = per_file if per_file is not None else file_days(production_logs.folder())
            days = per_file.get(path.name, {})
            files[path.name] = {"sha": digest, "days": days}
            for day, day_digest in days.items():
                if before.get(day) != day_digest:
                    pending[day] = sha256_hex(pending.get(day, "") + path.name + day_digest)[:16]
        partitions = lifecycle.production_days
        first, last = partitions.get_first_partition_key(), partitions.get_last_partition_key()
        requests, too_early = [], []
        ready = [day for day in pending if first <= day and last is not None and day <= last]
        scored = already_scored(context.instance, lifecycle.key("production_sample"), production_logs.folder(), ready)
        for day in sorted(pending):
            if day < first:
                too_early.append(day)
                del pending[day]
            elif day in scored:
                del pending[day]
            elif last is not None and day <= last:
                requests.append(dg.RunRequest(run_key=f"{day}:{pending.pop(day)}", partition_key=day,
                                              tags={"rag_assets/trigger": "production_logs"}))
        if too_early:
            context.log.warning(f"log days before the first production partition {first} are ignored: {', '.join(too_early)} "
                                f"(set RAG_ASSETS_PRODUCTION_START earlier to score them)")
        waiting = f"; waiting for days to complete: {', '.join(sorted(pending))}" if pending else ""
        return dg.SensorResult(run_requests=requests, cursor=json.dumps({"files": files, "pending": pending}),
                               skip_reason=None if requests else f"no new production log records{waiting}")

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
    @dg.run_failure_sensor(
        name=lifecycle.named("run_failure_alerts"),
        monitored_jobs=[build_lifecycle_job(lifecycle), build_curation_import_job(lifecycle),
                        build_production_job(lifecycle)] if lifecycle.name else None,
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=lifecycle.interval(30),
        description="Writes an alert record for every failed run (job, partition, failed steps, first error) to the "
                    "store, and POSTs it to RAG_ASSETS_ALERT_WEBHOOK when that is set.",
    )
    @lifecycle.keyed
    def run_failure_alerts(context: dg.RunFailureSensorContext, store: StoreResource) -> None:
        from rag_assets.alerts import deliver, failure_alert

        run = context.dagster_run
        errors = [event.event_specific_data.error.message.strip() for event in context.get_step_failure_events()]
        alert = failure_alert(run.run_id, run.job_name, run.tags.get("dagster/partition"),
                              context.failure_event.message or "run failed", errors)
        store.alerts().save(alert)
        status = deliver(alert, current_settings().alert_webhook)
        context.log.info(f"alert for run {run.run_id} recorded ({status})")

    return run_failure_alerts


run_failure_alerts = build_run_failure_alerts(BUNDLED)
