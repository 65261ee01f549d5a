"""The inbox sensor: anything that is not a review file goes to rejected/ with a reason; a review
naming its corpus version only in the corpus_version column is routed by that column."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.curation.models import OUTBOX_COLUMNS
from rag_assets.definitions import defs
from rag_assets.defs.partitions import corpus_versions
from rag_assets.settings import Settings
from tests.conftest import SharedCheckout
from tests.defs.lifecycle import candidates_generated, inbox_tick

VERSION = "cv-0123456789ab"


def _header_only_review() -> Path:
    """A review file of corpus version VERSION with its header only, in the inbox (made here)."""
    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True)
    path = inbox / f"review-{VERSION}.csv"
    path.write_text(",".join(OUTBOX_COLUMNS) + "\r\n", encoding="utf-8")
    return path


def test_folders_and_other_file_types_are_rejected_with_a_reason_and_lock_files_left_alone(project_env: Path):
    curation = Settings.from_env().curation_root
    inbox = curation / "inbox"
    (inbox / "batch-2").mkdir(parents=True)
    (inbox / "batch-2" / f"review-{VERSION}.csv").write_text("candidate_id\n")
    (inbox / "review.xls").write_bytes(b"\xd0\xcf\x11\xe0")
    (inbox / "notes").write_text("no suffix")
    (inbox / ".~lock.review.csv#").write_text("ana,host")

    with dg.instance_for_test() as instance:
        result = inbox_tick(instance)

    assert result.run_requests == []
    assert sorted(p.name for p in inbox.iterdir()) == [".~lock.review.csv#"]
    rejected = curation / "rejected"
    assert (rejected / "batch-2" / f"review-{VERSION}.csv").exists() and (rejected / "review.xls").exists()
    reasons = {name: json.loads((rejected / f"{name}.errors.json").read_text())[0]["problem"]
               for name in ("batch-2", "review.xls", "notes")}
    assert reasons == {"batch-2": "a folder; the inbox takes review files (.csv, .jsonl or .xlsx) directly, not folders",
                       "review.xls": "unsupported file type '.xls'; save the review file as .csv, .jsonl or .xlsx",
                       "notes": "file has no suffix; save the review file as .csv, .jsonl or .xlsx"}


def test_a_review_named_without_its_corpus_version_is_routed_by_its_column(project_env: Path):
    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True)
    header = ";".join(name.upper() for name in OUTBOX_COLUMNS)
    undecided_first = ";" * (len(OUTBOX_COLUMNS) - 1)
    row = ";".join(VERSION if name == "corpus_version" else "" for name in OUTBOX_COLUMNS)
    (inbox / "my review (ana).csv").write_text("\r\n".join([header, undecided_first, row]) + "\r\n",
                                               encoding="utf-8-sig")
    line = {name: VERSION if name == "corpus_version" else None for name in OUTBOX_COLUMNS}
    (inbox / "tool-output.jsonl").write_text("\n" + json.dumps(line) + "\n")

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        candidates_generated(VERSION)
        result = inbox_tick(instance)

    assert sorted((r.partition_key, r.run_config["ops"]["curated_decisions"]["config"]["files"][0])
                  for r in result.run_requests) == [(VERSION, "my review (ana).csv"), (VERSION, "tool-output.jsonl")]


def test_a_review_waits_in_the_inbox_until_the_candidates_of_its_corpus_version_exist(project_env: Path):
    """A review in the inbox when dagster dev first starts: the partition exists before question_candidates ran;
    imported then, all 50 ids were unknown and the user's file went to rejected/."""
    path = _header_only_review()

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        early = inbox_tick(instance)
        assert early.run_requests == [] and path.exists()
        assert early.skip_reason.skip_message == (f"no new reviewed file in the inbox; waiting: {path.name} (the "
                                                  f"candidates of corpus version {VERSION} are not generated yet)")
        candidates_generated(VERSION)
        ready = inbox_tick(instance, early.cursor)
    assert [r.partition_key for r in ready.run_requests] == [VERSION]


def test_a_review_of_a_version_without_a_partition_waits_while_the_store_is_down(project_env: Path, monkeypatch):
    """The store unreachable made every version look ungenerated: a review whose version had no partition yet
    went to rejected/ for an outage."""
    path = _header_only_review()
    candidates_generated(VERSION)
    monkeypatch.setenv("RAG_ASSETS_DATABASE_URL", "postgresql+psycopg2://nobody@127.0.0.1:1/down")
    with dg.instance_for_test() as instance:
        down = inbox_tick(instance)
        assert down.run_requests == [] and path.exists()
        assert down.skip_reason.skip_message == (
            f"no new reviewed file in the inbox; waiting: {path.name} (the store cannot be read; whether the "
            f"candidates of corpus version {VERSION} exist is asked again on a later tick)")
        monkeypatch.delenv("RAG_ASSETS_DATABASE_URL")
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        assert [r.partition_key for r in inbox_tick(instance, down.cursor).run_requests] == [VERSION]


def test_an_import_that_failed_because_the_store_was_down_is_retried_a_bounded_number_of_times(
        project_env: Path, monkeypatch):
    from rag_assets.defs.sensors import IMPORT_ATTEMPTS
    from tests.defs.lifecycle import run_job

    path = _header_only_review()

    def run(request: dg.RunRequest, instance: dg.DagsterInstance, **kwargs) -> dg.ExecuteInProcessResult:
        return run_job(instance, "curation_import", request.partition_key, request.run_config, **kwargs,
                       tags={**request.tags, "dagster/run_key": request.run_key})

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        candidates_generated(VERSION)
        first = inbox_tick(instance)
        assert [r.run_key for r in first.run_requests] == [digest := first.run_requests[0].run_key]
        running = instance.add_run(dg.DagsterRun(job_name="curation_import", run_id=str(uuid.uuid4()),
                                              status=dg.DagsterRunStatus.STARTED, tags={"dagster/run_key": digest}))
        assert inbox_tick(instance, first.cursor).run_requests == [], "no second request while the run goes on"
        instance.delete_run(running.run_id)
        monkeypatch.setenv("RAG_ASSETS_DATABASE_URL", "postgresql+psycopg2://nobody@127.0.0.1:1/down")
        run(first.run_requests[0], instance, expect_success=False)
        assert path.exists(), "a failure of the store leaves the file in the inbox"

        cursor, keys = first.cursor, [digest]
        for attempt in range(2, IMPORT_ATTEMPTS + 1):
            tick = inbox_tick(instance, cursor)
            (request,) = tick.run_requests
            assert (request.run_key, request.tags["rag_assets/attempt"]) == (f"{digest}:{attempt}", str(attempt))
            keys.append(request.run_key)
            run(request, instance, expect_success=False)
            cursor = tick.cursor
        given_up = inbox_tick(instance, cursor)
        assert given_up.run_requests == [] and not path.exists()
        report = (Settings.from_env().curation_root / "rejected" / f"{path.name}.errors.txt").read_text()
        assert f"the import failed {IMPORT_ATTEMPTS} times" in report and "is the store up?" in report

        path.write_text(",".join(OUTBOX_COLUMNS) + "\r\n", encoding="utf-8")  # dropped again, store back up
        monkeypatch.delenv("RAG_ASSETS_DATABASE_URL")
        again = inbox_tick(instance, given_up.cursor)
        assert [r.run_key for r in again.run_requests] == [f"{digest}:{IMPORT_ATTEMPTS + 1}"], "run keys stay unique"


def test_a_link_in_the_inbox_is_rejected_without_reading_what_it_leads_to(project_env: Path, tmp_path: Path):
    curation = Settings.from_env().curation_root
    inbox = curation / "inbox"
    inbox.mkdir(parents=True)
    secret = tmp_path / "outside" / "secret.csv"
    secret.parent.mkdir()
    secret.write_text(",".join(OUTBOX_COLUMNS) + "\n" + ",".join(
        "TOPSECRET-hunter2" if name == "candidate_id" else VERSION if name == "corpus_version" else ""
        for name in OUTBOX_COLUMNS) + "\n")
    secret.chmod(0o600)
    (inbox / f"review-{VERSION}.csv").symlink_to(secret)

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        candidates_generated(VERSION)
        result = inbox_tick(instance)

    assert result.run_requests == [] and list(inbox.iterdir()) == []
    rejected = curation / "rejected"
    assert (rejected / f"review-{VERSION}.csv").is_symlink()
    assert json.loads((rejected / f"review-{VERSION}.csv.errors.json").read_text()) == [
        {"row": None, "field": None, "problem": "a symbolic link; the inbox takes the review file itself, "
                                                "not a link to it (links are not followed)"}]
    written = b"".join(p.read_bytes() for p in rejected.iterdir() if not p.is_symlink())
    assert b"TOPSECRET" not in written and secret.read_text().startswith("candidate_id")


_WATCHED: set[str] = set()
_OPENED: list[str] = []


def _record_opens(event: str, args: tuple) -> None:
    if event == "open" and _WATCHED and isinstance(args[0], (str, Path)) and str(args[0]) in _WATCHED:
        _OPENED.append(str(args[0]))


sys.addaudithook(_record_opens)  # audit hooks stay for the process: this one notes opens of watched paths only


def test_a_review_file_over_the_size_limit_is_rejected_by_its_size_without_being_read_once(project_env: Path):
    from rag_assets.curation.models import ReviewLimits

    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True)
    path = inbox / f"review-{VERSION}.csv"
    size = ReviewLimits.max_bytes + 1
    with path.open("wb") as handle:
        handle.truncate(size)  # a real (sparse) file of that size
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        _WATCHED.add(str(path))
        try:
            first = inbox_tick(instance)
        finally:
            _WATCHED.clear()
        opened = list(_OPENED)
        second = inbox_tick(instance, first.cursor)

    assert opened == [], "the sensor decided by the file's size, without opening it"
    assert first.run_requests == [] and second.run_requests == [] and not path.exists()
    rejected = Settings.from_env().curation_root / "rejected"
    assert (rejected / path.name).stat().st_size == size
    report = (rejected / f"{path.name}.errors.txt").read_text(encoding="utf-8").splitlines()
    assert report[-1] == f"- file: file is {size:,} bytes, over the {ReviewLimits.max_bytes:,}-byte limit"


def test_an_import_killed_after_its_commit_gets_a_run_from_the_sensor_that_builds_the_golden_set(project_env: Path):
    """What a daemon-launched import leaves when it is killed between the store's commit and Dagster's record
    (the review applied and moved to processed/, no curated_decisions materialization of it): the sensor
    finds the store ahead of Dagster and requests one run, which records the files and builds the golden set."""
    from rag_assets.curation.inbox import import_review_file
    from rag_assets.curation.review_file import read_review_file
    from rag_assets.defs.resources import RESOURCES, CurationResource
    from tests.defs.lifecycle import current_version, metadata, run_job, run_sensor_requests, stage_sample_review

    version = current_version()
    store = RESOURCES["store"]
    with dg.instance_for_test() as instance:
        run_job(instance, "lifecycle", version)  # no review yet: no golden set
        assert inbox_tick(instance).run_requests == [], "nothing applied, nothing to recover"
        stage_sample_review(version)
        folders = CurationResource().folders()
        (review,) = folders.inbox.iterdir()
        repo = store.curation()
        result = import_review_file(review, folders, store.candidates().corpus_versions_by_id(), read_review_file,
                                    repo.apply_review, is_applied=repo.is_applied)  # the run's commit, then killed
        assert result.status == "applied" and list(folders.inbox.iterdir()) == []

        first = inbox_tick(instance)
        assert [(r.partition_key, r.run_key.startswith(f"recover-{version}-")) for r in first.run_requests] == \
            [(version, True)]
        (run,) = run_sensor_requests(instance, first)
        golden = metadata(run, "golden_set")
        assert (golden["items"], golden["added"]) == (48, 48)
        assert inbox_tick(instance, first.cursor).run_requests == [], "recorded: nothing left to recover"


def _review_of_cli_candidates(home: Path) -> str:
    """``rag-assets run --no-review`` on a new checkout (the CLI's own Dagster instance in the home): the candidates
    generated into the store and queued; then every candidate accepted in the outbox CSV, saved into the inbox.
    Returns the corpus version."""
    from rag_assets.cli import main
    from tests.defs.lifecycle import current_version, review_as_expert

    assert main(["run", "--no-review", "--no-production"]) == 0
    version = current_version()
    review_as_expert(version, f"review-{version}.csv", lambda i, row: {"decision": "accept", "reviewer": "ana"})
    return version


@pytest.fixture(scope="module")
def reviewed_cli_checkout(tmp_path_factory: pytest.TempPathFactory) -> SharedCheckout:
    """A checkout (as ``checkout``'s) after ``_review_of_cli_candidates``, made once per module; ``made`` is the
    corpus version."""
    return SharedCheckout(tmp_path_factory.mktemp("cli-candidates"), _review_of_cli_candidates)


@pytest.fixture
def reviewed_cli_candidates(reviewed_cli_checkout: SharedCheckout, monkeypatch: pytest.MonkeyPatch) -> str:
    """The checkout as ``_review_of_cli_candidates`` left it, whatever an earlier test did to it; the environment
    points at it. Returns the corpus version."""
    reviewed_cli_checkout.use(monkeypatch)
    return reviewed_cli_checkout.made


def test_a_review_of_candidates_the_cli_generated_is_imported_under_a_ui_on_another_dagster_instance(
        reviewed_cli_candidates: str):
    """``dagster dev`` on another DAGSTER_HOME than the CLI's (or none) has no record of question_candidates: the
    sensor decides from the store, where the candidates are, as the CLI's import does; it waited forever."""
    from tests.defs.lifecycle import metadata, run_sensor_requests

    version = reviewed_cli_candidates
    with dg.instance_for_test() as ui:
        ui.add_dynamic_partitions(corpus_versions.name, [version])  # what the corpus sensor's first tick adds
        tick = inbox_tick(ui)
        assert [r.partition_key for r in tick.run_requests] == [version], tick.skip_reason
        (run,) = run_sensor_requests(ui, tick)
    decisions = metadata(run, "curated_decisions")
    assert (decisions["files_applied"], decisions["files_rejected"], decisions["accepted"]) == (1, 0, 50)


def test_a_review_of_stored_candidates_waits_for_its_partition_when_the_inbox_ticks_before_the_corpus_sensor(
        reviewed_cli_candidates: str):
    """On a new Dagster instance the corpus version has no partition until the corpus sensor's first tick; a
    review of candidates the store holds was rejected ("no partition") when the inbox sensor ticked first. It waits
    for the partition, which the corpus sensor adds with the snapshot's run, and is imported on the next tick."""
    from rag_assets.defs.sensors import corpus_sensor

    version = reviewed_cli_candidates
    inbox = Settings.from_env().curation_root / "inbox"
    with dg.instance_for_test() as ui:
        early = inbox_tick(ui)
        assert early.run_requests == [] and [p.name for p in inbox.iterdir()] == [f"review-{version}.csv"]
        assert early.skip_reason.skip_message == (
            f"no new reviewed file in the inbox; waiting: review-{version}.csv (corpus version {version} has no "
            "partition in this Dagster instance yet (the corpus sensor adds the current corpus version's; add "
            "another in the UI))")
        with dg.build_sensor_context(instance_ref=ui.get_ref(), definitions=defs, resources=defs.resources) as context:
            corpus_tick = corpus_sensor(context)
        for request in corpus_tick.dynamic_partitions_requests:  # as the daemon applies them after the tick
            ui.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        ready = inbox_tick(ui, early.cursor)
    assert [r.partition_key for r in corpus_tick.run_requests] == [version]
    assert [r.partition_key for r in ready.run_requests] == [version]


def test_a_review_waits_while_the_store_has_no_candidates_of_its_version_whatever_dagster_recorded(
        project_env: Path):
    """Dagster's record of question_candidates is no proof that this store holds them (another store URL, a new
    store under an instance that ran before): imported then, every id was unknown and the file was rejected."""
    path = _header_only_review()

    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(corpus_versions.name, [VERSION])
        instance.report_runless_asset_event(dg.AssetMaterialization("question_candidates", partition=VERSION))
        tick = inbox_tick(instance)
    assert tick.run_requests == [] and path.exists()
    assert tick.skip_reason.skip_message == (f"no new reviewed file in the inbox; waiting: {path.name} (the "
                                             f"candidates of corpus version {VERSION} are not generated yet)")


def test_a_judge_review_saved_under_another_name_gets_the_calibration_run_not_a_rejection(project_env: Path,
                                                                                          tmp_path: Path):
    """Told by its columns: it was rejected as a question review naming no corpus version."""
    from rag_assets.calibration.models import JudgeConfig, ReviewItem
    from rag_assets.calibration.review_file import write_judge_review

    metrics = ("faithfulness", "answer_relevance", "context_precision", "context_recall")
    item = ReviewItem("q-1", "factual", "What?", "That.", ("a context",), dict.fromkeys(metrics, 1.0),
                      dict.fromkeys(metrics, "why"))
    _, sent = write_judge_review([item], "ev-00000000000000000001", JudgeConfig("offline", "m", "t", "e"), tmp_path)
    inbox = Settings.from_env().curation_root / "inbox"
    inbox.mkdir(parents=True)
    sent.rename(inbox / f"jr_yes-{sent.name}")

    with dg.instance_for_test() as instance:
        result = inbox_tick(instance)

    assert [(r.job_name, r.partition_key, r.run_config["ops"]["judge_calibration"]["config"]["files"])
            for r in result.run_requests] == [("judge_calibration_import", None,
                                               ["jr_yes-judge-review-ev-00000000000000000001.csv"])]
    assert not (inbox.parent / "rejected").exists()
