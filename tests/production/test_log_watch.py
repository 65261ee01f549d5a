"""The production log sensor's cursor: which days a changed file makes pending, which pending days it requests."""

from __future__ import annotations

from rag_assets.corpus.models import sha256_hex
from rag_assets.production.log_watch import LogCursor, plan_days, ready_days


def test_a_changed_file_makes_only_its_changed_days_pending():
    cursor = LogCursor(files={"a.jsonl": {"sha": "s1", "days": {"2026-01-01": "d1", "2026-01-02": "d2"}}})
    assert not cursor.changed("a.jsonl", "s1") and cursor.changed("a.jsonl", "s2") and cursor.changed("b.jsonl", "s")
    cursor.record("a.jsonl", "s2", {"2026-01-01": "d1", "2026-01-02": "d2x"})
    assert cursor.pending == {"2026-01-02": sha256_hex("a.jsonl" + "d2x")[:16]}
    cursor.record("b.jsonl", "s3", {"2026-01-02": "e2"})
    assert cursor.pending == {"2026-01-02": sha256_hex(sha256_hex("a.jsonl" + "d2x")[:16] + "b.jsonl" + "e2")[:16]}
    assert LogCursor.load(cursor.dump()) == cursor


def test_pending_days_are_dropped_before_the_first_partition_or_when_scored_requested_when_they_exist():
    cursor = LogCursor(pending={"2025-12-31": "p0", "2026-01-01": "p1", "2026-01-02": "p2", "2026-01-05": "p5"})
    assert ready_days(cursor.pending, "2026-01-01", "2026-01-03") == ["2026-01-01", "2026-01-02"]
    assert ready_days(cursor.pending, "2026-01-01", None) == []
    plan = plan_days(cursor, "2026-01-01", "2026-01-03", scored={"2026-01-01"})
    assert plan.requests == [("2026-01-02", "2026-01-02:p2")]
    assert plan.too_early == ["2025-12-31"]
    assert cursor.pending == {"2026-01-05": "p5"}, "a day without a partition yet waits"


def test_no_day_is_requested_before_any_partition_exists():
    cursor = LogCursor(pending={"2026-01-02": "p2"})
    plan = plan_days(cursor, "2026-01-01", None, scored=set())
    assert plan.requests == [] and plan.too_early == [] and cursor.pending == {"2026-01-02": "p2"}


def test_a_day_waits_while_a_day_of_its_drift_baseline_is_pending_or_in_flight():
    """A day's drift baseline is the dates before it, whatever order concurrent runs end in: a day is requested
    only once the days of its window are scored; days further apart than the window go together."""
    cursor = LogCursor(pending={"2026-01-02": "p2", "2026-01-03": "p3", "2026-01-20": "p20"})
    plan = plan_days(cursor, "2026-01-01", "2026-01-31", scored=set(), in_flight={"2026-01-01"}, window=7)
    assert plan.requests == [("2026-01-20", "2026-01-20:p20")], "01-02 waits for 01-01's run, 01-03 for 01-02"
    assert sorted(cursor.pending) == ["2026-01-02", "2026-01-03"]
    plan = plan_days(cursor, "2026-01-01", "2026-01-31", scored=set(), in_flight=set(), window=7)
    assert plan.requests == [("2026-01-02", "2026-01-02:p2")] and list(cursor.pending) == ["2026-01-03"]
