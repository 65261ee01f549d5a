"""production_sample through Dagster on the bundled logs: sampling, bad lines, drift, coverage gaps, the sensor."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.defs.assets.curation import curation_queue
from rag_assets.defs.assets.production import production_sample
from rag_assets.defs.resources import RESOURCES, LLMResource
from rag_assets.defs.sensors import production_logs_sensor
from rag_assets.definitions import defs
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT, SharedCheckout
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.claude_generation import API_KEY
from tests.fakes.claude_judge import judge_responder
from rag_assets.app.production import NO_GOLDEN_SET
from tests.defs.lifecycle import (LifecycleRun, build_golden_set, check_evaluations, data_version, metadata,
                                  outbox_rows, failed_step_error)

BUNDLED_LOGS = PROJECT_ROOT / "data" / "production_logs"
DAYS = [f"2026-11-{day}" for day in range(20, 27)]
BAD_DAY, MALFORMED_DAY = "2026-11-26", "2026-11-23"
UNCOVERED = "Is there a dark mode in the Kestrel desktop app?"


@pytest.fixture
def logs_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the bundled production logs, named by RAG_ASSETS_PRODUCTION_LOGS."""
    folder = tmp_path / "production_logs"
    shutil.copytree(BUNDLED_LOGS, folder)
    monkeypatch.setenv("RAG_ASSETS_PRODUCTION_LOGS", str(folder))
    return folder


@pytest.fixture
def production_logs(project_env: Path, logs_copy: Path) -> Path:
    """The private copy of the logs, on a new checkout (nothing built yet)."""
    return logs_copy


def _day(instance: dg.DagsterInstance, day: str, **config) -> dg.ExecuteInProcessResult:
    return dg.materialize([production_sample], partition_key=day, instance=instance, resources=RESOURCES,
                          run_config={"ops": {"production_sample": {"config": config}}} if config else None)


def _sampled_ids(run_id: str) -> list[str]:
    from rag_assets.store.tables import ProductionScoreRow
    from sqlalchemy import select

    table = ProductionScoreRow.__table__
    with RESOURCES["store"].engine().connect() as conn:
        return sorted(set(conn.execute(select(table.c.item_id).where(table.c.run_id == run_id)).scalars()))


def test_the_sample_of_a_day_is_the_same_on_every_run_and_differs_between_days(production_logs: Path):
    with dg.instance_for_test() as instance:
        first = metadata(_day(instance, "2026-11-21", sample_size=12), "production_sample")
        again = metadata(_day(instance, "2026-11-21", sample_size=12), "production_sample")
        other = metadata(_day(instance, "2026-11-22", sample_size=12), "production_sample")
    assert first["records"] == 40 and first["sample_size"] == 12
    assert first["production_run"] != again["production_run"]
    sampled = _sampled_ids(first["production_run"])
    assert len(sampled) == 12 and sampled == _sampled_ids(again["production_run"])
    assert first["faithfulness"] == again["faithfulness"]
    assert all(i.startswith("prod-20261121-") for i in sampled)
    assert all(i.startswith("prod-20261122-") for i in _sampled_ids(other["production_run"]))


@pytest.fixture(scope="module")
def scored_week(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dg.ExecuteInProcessResult]:
    """Every bundled day scored with the default configuration, oldest first, on a new checkout with a private copy
    of the logs, in one Dagster instance: each day's run (its events, kept in memory). Made once per module for the
    tests that only read those runs; no test changes what they hold."""
    def score(home: Path) -> dict[str, dg.ExecuteInProcessResult]:
        folder = home.parent / "production_logs"
        shutil.copytree(BUNDLED_LOGS, folder)
        with pytest.MonkeyPatch.context() as patch, dg.instance_for_test() as instance:
            patch.setenv("RAG_ASSETS_PRODUCTION_LOGS", str(folder))
            return {day: _day(instance, day) for day in DAYS}

    return SharedCheckout(tmp_path_factory.mktemp("week"), score, curation_sample=False).made


def test_malformed_lines_are_reported_with_file_line_and_field_and_the_day_is_scored(
        scored_week: dict[str, dg.ExecuteInProcessResult]):
    result = scored_week[MALFORMED_DAY]
    meta = metadata(result, "production_sample")
    assert result.success and meta["records"] == 40 and meta["bad_lines"] == 2
    assert f"| served-{MALFORMED_DAY}.jsonl | 6 | not valid JSON: Expecting value (column 59) |" in meta["bad_line_details"]
    assert f"| served-{MALFORMED_DAY}.jsonl | 13 | retrieved\\[0\\].chunk_id: expected a string |" in meta["bad_line_details"]


def test_the_planted_unfaithful_day_fires_the_drift_check_and_a_same_quality_day_does_not(
        scored_week: dict[str, dg.ExecuteInProcessResult]):
    results = scored_week
    assert metadata(results["2026-11-25"], "production_sample")["bad_lines"] == 0  # the bad lines are 11-23's
    same_quality = check_evaluations(results["2026-11-25"])
    assert all(check.passed for check in same_quality.values()), {n: c.description for n, c in same_quality.items()}
    bad = check_evaluations(results[BAD_DAY])
    faithfulness = bad["drift_faithfulness"]
    assert not faithfulness.passed
    assert faithfulness.description.startswith("DRIFT faithfulness: ")
    assert "minimum detectable difference" in faithfulness.description
    assert "Likely cause: the generator strays from the context" in faithfulness.description
    assert "First action: compare a day's unfaithful answers" in faithfulness.description
    meta = {k: v.value for k, v in faithfulness.metadata.items()}
    assert meta["drop"] > meta["minimum_detectable_difference"] and meta["drop"] > meta["allowed_drop"]
    assert meta["beyond_noise"] is True and meta["n"] == 30
    assert bad["drift_answer_relevance"].passed
    day = metadata(results[BAD_DAY], "production_sample")
    assert day["drift_alerts"] >= 1 and day["claims_inconsistency"] > 0
    assert "| **2026-11-26** | 30 |" in day["previous_days"] and "| 2026-11-20 | 30 |" in day["previous_days"]


HOSTILE = "![x](http://127.0.0.1:9/q-pixel.png) <img src=x onerror=alert(1)> [link](javascript:alert(1)) a | b"


def test_a_question_unlike_any_golden_item_is_a_coverage_gap_queued_for_review(lifecycle_run: LifecycleRun,
                                                                              logs_copy: Path):
    """Also: a logged question with markdown is shown as text in the coverage gap list."""
    from markdown_it import MarkdownIt

    version = lifecycle_run.version  # the lifecycle ran on the sample with its bundled review (no production days)
    production_logs = logs_copy
    day = next(d for d in DAYS if UNCOVERED in (production_logs / f"served-{d}.jsonl").read_text())
    record = json.loads((production_logs / f"served-{day}.jsonl").read_text().splitlines()[0])
    (production_logs / "hostile.jsonl").write_text(json.dumps({**record, "query_id": "hostile", "question": HOSTILE}) + "\n")
    with lifecycle_run.instance() as instance:
        pending_before = {row["question"] for row in outbox_rows(version)}
        meta = metadata(_day(instance, day), "production_sample")
        gaps = meta["coverage_gap_list"]
        (row,) = [line for line in gaps.splitlines() if line.startswith("| hostile |")]
        tokens = [t for block in MarkdownIt("commonmark").enable("table").parse(gaps)
                  for t in [block, *(block.children or [])]]
        assert not {t.type for t in tokens} & {"image", "link_open", "html_inline", "html_block"}
        assert row.startswith("| hostile | !\\[x\\](http\\://127.0.0.1:9/q-pixel.png) \\<img src=x onerror=alert(1)> "
                              "\\[link\\](javascript:alert(1)) a \\| b | ")
        assert UNCOVERED in meta["coverage_gap_list"] and meta["queued_candidates"] >= 1
        assert meta["queued_for_corpus_version"] == version
        covered = [line for line in meta["coverage_gap_list"].splitlines() if " in version " in line.lower()]
        assert covered == [], "questions taken from the golden set must not be gaps"
        queued = {row["question"]: row for row in outbox_rows(version)}
        assert UNCOVERED not in pending_before and UNCOVERED in queued, (
            "the day writes what it queued into the experts' review file at once: nothing the queue's asset reads "
            "changed, so it would not run again")
        assert queued[UNCOVERED]["decision"] == ""
        dg.materialize([curation_queue], partition_key=version, instance=instance, resources=RESOURCES)
    assert {row["question"] for row in outbox_rows(version)} == set(queued), "the queue's asset writes the same"


def test_no_golden_set_yet_no_coverage_gap_is_counted_or_queued_and_the_day_is_marked_to_score_again(
        production_logs: Path):
    """Under dagster dev a day was scored before any golden set existed: all 40 questions were gaps, 26 junk
    candidates were queued, and nothing ever scored the day again (the CLI scores days after the golden set)."""
    with dg.instance_for_test() as instance:
        result = _day(instance, DAYS[0], sample_size=3)
    meta = metadata(result, "production_sample")
    assert "coverage_gaps" not in meta and "queued_candidates" not in meta
    assert meta["coverage"].startswith("not measured: no golden set exists yet")
    assert data_version(result, "production_sample").endswith(NO_GOLDEN_SET), "not the records' digest: scored again"
    assert RESOURCES["store"].candidates().corpus_versions_by_id() == {}


def test_a_drift_baseline_names_a_logged_previous_day_that_is_not_scored_yet(production_logs: Path):
    """The baseline is the dates before the day: a day scored before one of them says so instead of silently
    comparing with fewer days (under dagster dev, 11-26 once left out 11-22 because its run ended later)."""
    with dg.instance_for_test() as instance:
        for day in ("2026-11-20", "2026-11-21", "2026-11-23"):
            result = _day(instance, day, sample_size=5)
    faithfulness = check_evaluations(result)["drift_faithfulness"]
    assert "over the previous 7 days (without 2026-11-22: logged, not scored yet)" in faithfulness.description
    assert faithfulness.metadata["baseline_days_not_scored"].value == "2026-11-22"


def _tick(instance: dg.DagsterInstance, cursor: str | None) -> dg.SensorResult:
    with dg.build_sensor_context(instance=instance, definitions=defs, resources=defs.resources, cursor=cursor) as context:
        return production_logs_sensor(context)


def _requested(result: dg.SensorResult) -> list[str]:
    return [r.partition_key for r in result.run_requests]


def test_the_sensor_waits_for_a_golden_set_then_requests_days_oldest_first_each_after_its_baseline(
        production_logs: Path):
    """As `rag-assets run` does: no day before a golden set exists, then a day only once the days of its drift
    baseline are scored (a run in flight counts as not scored); again only for days whose records changed."""
    with dg.instance_for_test() as instance:
        waiting = _tick(instance, None)
        assert waiting.run_requests == [] and "waiting for a golden set of the corpus" in (
            waiting.skip_reason.skip_message)
        assert sorted(json.loads(waiting.cursor)["pending"]) == DAYS, "the days wait in the cursor"
        build_golden_set(instance)
        for day in DAYS[:2]:  # scored by `rag-assets run` before: not requested again
            _day(instance, day, sample_size=5)
        cursor = waiting.cursor
        for day in DAYS[2:]:
            tick = _tick(instance, cursor)
            assert _requested(tick) == [day] and tick.run_requests[0].tags["rag_assets/trigger"] == "production_logs"
            cursor = tick.cursor
        idle = _tick(instance, cursor)
        assert idle.run_requests == [] and idle.skip_reason
        record = json.loads((production_logs / f"served-{DAYS[0]}.jsonl").read_text().splitlines()[0])
        late = {**record, "query_id": "late-1", "timestamp": "2026-11-22T23:59:00Z"}
        with (production_logs / f"served-{DAYS[0]}.jsonl").open("a") as handle:
            handle.write(json.dumps(late) + "\n")
        changed = _tick(instance, idle.cursor)
        assert _requested(changed) == ["2026-11-22"]
        future = {**record, "query_id": "future-1", "timestamp": "2999-01-01T00:00:00Z"}
        (production_logs / "served-later.jsonl").write_text(json.dumps(future) + "\n")
        later = _tick(instance, changed.cursor)
        assert later.run_requests == [] and "waiting for days to complete: 2999-01-01" in later.skip_reason.skip_message
        assert "2999-01-01" in json.loads(later.cursor)["pending"]
        with (production_logs / f"served-{DAYS[0]}.jsonl").open("a") as handle:
            handle.write(json.dumps({**record, "query_id": "late-2", "timestamp": f"{DAYS[1]}T12:00:00Z"}) + "\n")
        run = instance.create_run_for_job(defs.resolve_job_def("production"), tags={"dagster/partition": DAYS[0]})
        held = _tick(instance, later.cursor)
        assert held.run_requests == [] and f"drift baseline to be scored: {DAYS[1]}" in held.skip_reason.skip_message
        instance.report_run_canceled(run)
        assert _requested(_tick(instance, held.cursor)) == [DAYS[1]], "new records, the run before it ended"


def test_the_production_logs_default_to_the_bundled_folder(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("RAG_ASSETS_PRODUCTION_LOGS", raising=False)
    monkeypatch.chdir(PROJECT_ROOT)
    assert Settings.from_env().production_logs == BUNDLED_LOGS


def test_the_sensor_and_the_day_survive_lines_that_overflow_or_nest_without_end(production_logs: Path):
    record = json.loads((production_logs / f"served-{DAYS[0]}.jsonl").read_text().splitlines()[0])
    (production_logs / "hostile.jsonl").write_text("\n".join([
        json.dumps({**record, "query_id": "overflow", "timestamp": "9999-12-31T23:30:00-05:00"}),
        "[" * 100_000 + "]" * 100_000,
        json.dumps({**record, "query_id": "hostile-ok"}),
    ]) + "\n")
    with dg.instance_for_test() as instance:
        tick = _tick(instance, None)
        assert sorted(json.loads(tick.cursor)["pending"]) == DAYS
        result = _day(instance, DAYS[0], sample_size=2)
    assert result.success
    details = result.asset_materializations_for_node("production_sample")[0].metadata["bad_line_details"].value
    assert "| hostile.jsonl | 1 | timestamp: 9999-12-31T23:30:00-05:00 is out of range" in details
    assert "| hostile.jsonl | 2 | record: JSON nested deeper than 16 levels |" in details


def test_a_day_with_a_repeated_query_id_is_scored_and_the_repeat_reported(production_logs: Path):
    path = production_logs / f"served-{DAYS[0]}.jsonl"
    first = path.read_text().splitlines()[0]
    with path.open("a") as handle:
        handle.write(first + "\n")
    with dg.instance_for_test() as instance:
        result = _day(instance, DAYS[0], sample_size=1000)
    assert result.success
    details = result.asset_materializations_for_node("production_sample")[0].metadata["bad_line_details"].value
    assert f"duplicate of served-{DAYS[0]}.jsonl line 1 (the first is kept)" in details


def test_a_20_mb_logged_question_never_reaches_the_review_outbox(lifecycle_run: LifecycleRun, logs_copy: Path):
    """A golden set exists (the lifecycle ran on the sample with its bundled review): the day queues its gaps."""
    from rag_assets.curation.review_file import read_review_file

    production_logs = logs_copy
    record = json.loads((production_logs / f"served-{DAYS[0]}.jsonl").read_text().splitlines()[0])
    huge = "Is there a dark mode? " + "x" * 20_000_000
    (production_logs / "huge.jsonl").write_text(json.dumps({**record, "query_id": "huge", "question": huge}) + "\n")
    version = lifecycle_run.version
    with lifecycle_run.instance() as instance:
        result = _day(instance, DAYS[0], sample_size=2)
        dg.materialize([curation_queue], partition_key=version, instance=instance, resources=RESOURCES)
    details = result.asset_materializations_for_node("production_sample")[0].metadata["bad_line_details"].value
    assert "| huge.jsonl | 1 | record: the line is 20,00" in details
    outbox = Settings.from_env().curation_root / "outbox" / f"review-{version}.csv"
    assert outbox.stat().st_size < 1_000_000
    known = RESOURCES["store"].candidates().corpus_versions_by_id()
    assert read_review_file(outbox, known).undecided > 0, "the outbox stays importable"




def test_a_day_over_the_runs_or_its_own_budget_sends_no_request_and_fails_naming_the_budget(production_logs: Path):
    """The production judge spends within the run's budget (the llm resource's) and the asset's (max_cost_usd)."""
    def day(run_max: float | None, asset_max: float | None) -> str:
        llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_cost_usd=run_max)
        config = {"sample_size": 3} if asset_max is None else {"sample_size": 3, "max_cost_usd": asset_max}
        result = dg.materialize([production_sample], partition_key=DAYS[0], instance=instance, raise_on_error=False,
                                resources={**RESOURCES, "llm": llm},
                                run_config={"ops": {"production_sample": {"config": config}}})
        error = failed_step_error(result)
        assert "judge budget: the estimated cost $" in error and "nothing was sent" in error, error
        return error

    with dg.instance_for_test() as instance, FakeAnthropicServer(judge_responder) as server:
        assert "of run RUN (" in day(0.0, None)
        assert "of production_sample (" in day(None, 0.0)
        assert server.count() == 0, "stopped before any request"


def _judged_day(instance: dg.DagsterInstance, server: FakeAnthropicServer) -> dg.ExecuteInProcessResult:
    llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url, max_retries=0)
    return dg.materialize([production_sample], partition_key=DAYS[0], instance=instance, raise_on_error=False,
                          resources={**RESOURCES, "llm": llm},
                          run_config={"ops": {"production_sample": {"config": {"sample_size": 4}}}})


@pytest.mark.parametrize("outage", ["revoked key", "server error"])
def test_a_day_whose_judge_calls_failed_fails_its_judge_failure_budget_and_is_judged_again(
        production_logs: Path, outage: str):
    """With the key revoked mid-run, days were 'scored' with faithfulness 1.000 from the few items judged, drift
    passed on n=1 and `rag-assets run` said ok: no check covered the judge's failures in production."""
    from rag_assets.defs.freshness import judged_with_failures

    revoked = [API_KEY] if outage == "revoked key" else []
    failing = {"fail_rate": 1.0, "fail_status": 500} if outage == "server error" else {}
    with dg.instance_for_test() as instance, FakeAnthropicServer(judge_responder, revoked_keys=revoked,
                                                                 **failing) as server:
        failed = _judged_day(instance, server)
        check = check_evaluations(failed)["judge_failure_budget"]
        assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
        assert "faithfulness: 4 of 4 items (100.0%) not judged" in check.description, check.description
        assert "first error: " in check.description
        assert ("401" if outage == "revoked key" else "500") in check.description, check.description
        assert not failed.success, "a blocking gate: the run fails as the evaluation's does"
        meta = metadata(failed, "production_sample")
        assert meta["judge_failures"] > 0 and meta["faithfulness_failures"] == 4 and "faithfulness" not in meta
        assert judged_with_failures(failed.asset_materializations_for_node("production_sample")[0])
        server.revoked_keys.clear()
        server.fail_rate = 0.0
        sent = server.count()
        again = _judged_day(instance, server)
        assert again.success and server.count() > sent, "the failed calls are sent again"
        assert check_evaluations(again)["judge_failure_budget"].passed
        assert metadata(again, "production_sample")["faithfulness_failures"] == 0


def test_a_day_whose_judge_calls_failed_is_not_scored_already(production_logs: Path):
    """A re-run with a working key said "7 scored already on the same records" and kept the failed days: a day is
    done only when its newest materialization has the records' digest, the judge now, and no failed judge call."""
    from rag_assets.defs.freshness import already_scored
    from rag_assets.defs.reuse import CODE_VERSION_TAG, DATA_VERSION_TAG
    from rag_assets.production.logs import logged_days

    digest = logged_days(production_logs)[DAYS[0]]

    def scored_after(failures: int, label: str = "judge_failures") -> set[str]:
        instance.report_runless_asset_event(dg.AssetMaterialization(
            production_sample.key, partition=DAYS[0], metadata={label: failures},
            tags={DATA_VERSION_TAG: digest, CODE_VERSION_TAG: "judge-v1"}))
        return already_scored(instance, production_sample.key, "judge-v1", production_logs, [DAYS[0]])

    with dg.instance_for_test() as instance:
        assert scored_after(17) == set(), "judged again by the next run"
        assert scored_after(0) == {DAYS[0]}
        assert scored_after(16, "faithfulness_failures") == set(), "a day scored before judge_failures was recorded"
        assert scored_after(0, "faithfulness_failures") == {DAYS[0]}
