"""Automation as the daemon evaluates it: conditions past blocking checks, the schedule, failure alerts."""

from __future__ import annotations

import csv
import datetime
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.definitions import defs
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.defs.assets.corpus import corpus_snapshot
from rag_assets.defs.assets.curation import curated_decisions
from rag_assets.defs.assets.generation import question_candidates
from rag_assets.defs.assets.golden import golden_set
from rag_assets.defs.checks import golden_set_pinned, golden_set_quality
from rag_assets.defs.graph import ASSETS, CHECKS
from rag_assets.defs.lifecycle import BUNDLED
from rag_assets.defs.partitions import corpus_versions
from rag_assets.defs.resources import RESOURCES, CorpusResource
from rag_assets.defs.schedules import reevaluation_schedule
from rag_assets.defs.sensors import automation_sensor, corpus_sensor, curation_inbox_sensor, run_failure_alerts
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT, SharedCheckout
from tests.defs.lifecycle import current_version

RAG = dg.AssetKey("rag_answers")


def _requested(result, key: dg.AssetKey) -> set[str]:
    return set(result.get_requested_partitions(key))


def _stage_review(version: str, reject_all: bool) -> None:
    """The bundled review of ``version`` in the inbox; with ``reject_all``, every candidate rejected."""
    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    with (PROJECT_ROOT / "data/curation/sample" / f"review-{version}.csv").open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    if reject_all:
        rows = [{**row, "decision": "reject", "edited_question": "", "edited_answer": ""} for row in rows]
    with (inbox / f"review-{version}.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _requested_checks(result) -> set[str]:
    """The checks a tick requests (of the one corpus version the instance has)."""
    return {r.key.name for r in result.results if isinstance(r.key, dg.AssetCheckKey) and r.true_subset.size}


def _run_of_the_tick(instance: dg.DagsterInstance, version: str, result) -> dg.ExecuteInProcessResult:
    """What a tick requested, as the one run the daemon launches for it: the requested assets with their checks (each
    is requested with its asset or, having no condition, rides along with it)."""
    assets = [key for key in (r.key for r in result.results) if isinstance(key, dg.AssetKey)
              and version in _requested(result, key)]
    return dg.materialize([build(BUNDLED) for build in ASSETS + CHECKS], partition_key=version, instance=instance,
                          resources=RESOURCES, raise_on_error=False, selection=dg.AssetSelection.assets(*assets))


def _check_results(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.event_specific_data.check_name: e.event_specific_data.passed for e in result.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"}


def _build_golden(instance: dg.DagsterInstance, version: str) -> dict[str, bool]:
    """Materialize the golden set with its blocking checks; check name -> passed."""
    golden = dg.materialize([golden_set, golden_set_quality, golden_set_pinned], partition_key=version,
                            instance=instance, resources=RESOURCES, raise_on_error=False)
    return {e.event_specific_data.check_name: e.event_specific_data.passed for e in golden.all_events
            if e.event_type_value == "ASSET_CHECK_EVALUATION"}


@dataclass(frozen=True)
class Partitioned:
    """The corpus version, the automation conditions' first evaluation's cursor (``start``) and the folder of the
    Dagster instance it ran on."""

    version: str
    start: object
    instance_dir: Path

    def instance(self):
        """The instance, opened again (a context manager, as ``dg.instance_for_test``)."""
        return dg.instance_for_test(temp_dir=str(self.instance_dir))


@pytest.fixture(scope="module")
def partitioned_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """A new checkout whose Dagster instance (kept in the checkout) has the corpus version's partition and nothing
    materialized, and the automation conditions' first evaluation there, from which they track changes: ``made`` is
    a ``Partitioned``. Made once per module (an evaluation takes seconds); it reads no inbox, so a test stages its
    review after it as well as before."""
    def start(home: Path) -> Partitioned:
        version = current_version()
        instance_dir = home.parent / "dagster"
        instance_dir.mkdir()
        with dg.instance_for_test(temp_dir=str(instance_dir)) as instance:
            instance.add_dynamic_partitions(corpus_versions.name, [version])
            first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        return Partitioned(version, first.cursor, instance_dir)

    return SharedCheckout(tmp_path_factory.mktemp("partitioned"), start, curation_sample=False)


@pytest.fixture
def partitioned(partitioned_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> Partitioned:
    """The checkout as ``partitioned_checkout`` made it, whatever an earlier test did to it; the environment points
    at it as ``project_env`` does."""
    partitioned_checkout.use(monkeypatch)
    return partitioned_checkout.made


def _golden_then_evaluate(instance: dg.DagsterInstance, version: str, start, with_review: bool):
    """From the cursor ``start`` of the conditions' first evaluation (they track changes from there): snapshot,
    candidates and decisions, then the golden set."""
    if with_review:
        _stage_review(version, reject_all=False)
    dg.materialize([corpus_snapshot, question_candidates, curated_decisions], partition_key=version,
                   instance=instance, resources=RESOURCES)
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=start)
    passed = _build_golden(instance, version)
    after = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    return before, passed, after


def test_before_any_review_no_golden_set_is_built_and_one_rejecting_everything_fails_and_stops_the_rag_run(
        partitioned: Partitioned):
    """dagster dev's first start with an empty inbox built golden set v0 with no item, its blocking checks failed the
    run and wrote an alert; `rag-assets run` builds nothing before a review. A review is a decision, even one that
    rejects every candidate: its empty golden set is built, fails its check, and the RAG system is not run."""
    from rag_assets.defs.reuse import last_materialization

    version = partitioned.version
    with partitioned.instance() as instance:
        before, checks, after = _golden_then_evaluate(instance, version, partitioned.start, with_review=False)
        assert version in _requested(before, golden_set.key), "asked for, it finds nothing to build"
        assert checks == {} and last_materialization(instance, golden_set.key, version) is None
        assert not instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
        assert _requested(after, RAG) == set() and _requested(after, golden_set.key) == set()

        _stage_review(version, reject_all=True)
        dg.materialize([curated_decisions], partition_key=version, instance=instance, resources=RESOURCES)
        reviewed = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=after.cursor)
        assert _requested(reviewed, golden_set.key) == {version}, "new decisions: the golden set is built"
        assert {"golden_set_quality", "golden_set_pinned"} <= _requested_checks(reviewed), "in its run, its checks"
        assert _requested(reviewed, RAG) == {version}, "and the RAG answers, behind them in the same run"
        run = _run_of_the_tick(instance, version, reviewed)
        assert _check_results(run)["golden_set_quality"] is False, "everything rejected: empty, fails"
        started = {e.step_key for e in run.all_events if e.event_type_value == "STEP_START"}
        assert "golden_set" in started and not any(step.startswith("rag_answers") for step in started), \
            "the run stops there: no step of the RAG answers starts"
        built = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=reviewed.cursor)
        assert _requested(built, RAG) == set()


def test_a_passed_blocking_check_lets_the_rag_run_and_nothing_else_through(partitioned: Partitioned):
    """The tick that asks for the golden set asks for the RAG answers and the evaluation too, each behind the blocking
    checks of what it reads, for one run (they took three runs, one per tick; that a failed check stops the run is
    shown above): the golden set's checks pass, and the next tick asks for none of them again."""
    version, evaluation = partitioned.version, dg.AssetKey("evaluation")
    with partitioned.instance() as instance:
        tick, checks, after = _golden_then_evaluate(instance, version, partitioned.start, with_review=True)
        assert checks == {"golden_set_quality": True, "golden_set_pinned": True}
        assert [_requested(tick, key) for key in (golden_set.key, RAG, evaluation)] == [{version}] * 3
        gates = {"golden_set_quality", "golden_set_pinned", "rag_answers_pinned", "rag_answers_error_budget"}
        assert gates <= _requested_checks(tick), "each asset's blocking checks in its run"
        assert [_requested(after, key) for key in (golden_set.key, RAG, evaluation)] == [set()] * 3


def test_every_sensor_and_the_schedule_start_running():
    for sensor in (corpus_sensor, curation_inbox_sensor, automation_sensor, run_failure_alerts):
        assert sensor.default_status == dg.DefaultSensorStatus.RUNNING, sensor.name
    assert reevaluation_schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert reevaluation_schedule.cron_schedule == "0 6 * * *"


TICK = datetime.datetime(2026, 11, 30, 6, 0, tzinfo=datetime.timezone.utc)


def _scheduled(instance: dg.DagsterInstance) -> dg.RunRequest | dg.SkipReason:
    # each context in a with block: one opens its own instance from the ref, and that stays the process's current
    # one (Dagster's defs-state context variable) until the context is closed, for every later test of the worker
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=TICK, resources=RESOURCES) as context:
        return reevaluation_schedule(context)


def test_the_schedule_reevaluates_the_newest_corpus_partition_before_any_snapshot(project_env: Path):
    with dg.instance_for_test() as instance:
        assert isinstance(_scheduled(instance), dg.SkipReason)
        instance.add_dynamic_partitions(corpus_versions.name, ["cv-000000000001", "cv-000000000002"])
        request = _scheduled(instance)
        assert request.partition_key == "cv-000000000002"
        assert request.run_key == "reevaluate:cv-000000000002:2026-11-30T06:00:00+00:00"


def test_after_a_revert_the_schedule_reevaluates_and_the_next_snapshot_diffs_the_version_the_folder_holds(
        project_env: Path, sample_corpus: Path):
    """A tester put the corpus back to an earlier version: the schedule went on re-evaluating the newest version,
    no longer on disk, and the next edit's snapshot named it as its parent (its diff and its lineage's decisions)."""
    corpus, chunker = RESOURCES["store"].corpus(), RESOURCES["corpus"].chunker()
    page = sample_corpus / "v2" / "encryption.md"
    original = page.read_bytes()
    first = snapshot_corpus(sample_corpus, chunker, corpus).version_id
    page.write_bytes(original + b"\nOne more line.\n")
    second = snapshot_corpus(sample_corpus, chunker, corpus).version_id
    page.write_bytes(original)
    assert snapshot_corpus(sample_corpus, chunker, corpus).version_id == first
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [first, second])
        assert _scheduled(instance).partition_key == first
    page.write_bytes(original + b"\nAnother line.\n")
    third = snapshot_corpus(sample_corpus, chunker, corpus)
    assert third.diff.parent_version == first and corpus.lineage(third.version_id) == [third.version_id, first]


class _Webhook:
    def __init__(self) -> None:
        self.bodies: list[dict] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                hook.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def __enter__(self) -> _Webhook:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_failed_run_leaves_an_alert_record_and_posts_it(project_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with dg.instance_for_test() as instance, _Webhook() as hook:
        monkeypatch.setenv("RAG_ASSETS_ALERT_WEBHOOK", hook.url)
        instance.add_dynamic_partitions(corpus_versions.name, ["cv-000000000009"])
        missing = CorpusResource(root=str(tmp_path / "gone"))
        result = dg.materialize([corpus_snapshot], partition_key="cv-000000000009", instance=instance,
                                resources={**RESOURCES, "corpus": missing}, raise_on_error=False)
        failure = next(e for e in result.all_events if e.event_type_value == "PIPELINE_FAILURE")
        context = dg.build_run_status_sensor_context(
            sensor_name="run_failure_alerts", dagster_instance=instance, dagster_run=result.dagster_run,
            dagster_event=failure, resources={"store": RESOURCES["store"]}).for_run_failure()
        run_failure_alerts(context)
        (alert,) = RESOURCES["store"].alerts().all()
        assert alert.run_id == result.run_id and alert.partition == "cv-000000000009"
        assert "gone does not exist" in alert.errors[0]
        (posted,) = hook.bodies
        assert posted["run_id"] == result.run_id
        assert posted["text"].startswith(f"rag_assets: run {result.run_id} of __ephemeral_asset_job__ for corpus version "
                                         "cv-000000000009 failed:")
