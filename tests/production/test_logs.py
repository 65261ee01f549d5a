"""Production logs: valid records parsed, every bad line reported with file, line and field."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

from rag_assets.production.logs import BadLine, read_logs


def _record(**overrides: object) -> dict:
    record = {"timestamp": "2024-05-01T10:00:00Z", "question": "How do I rotate an API key?",
              "answer": "Open settings.", "retrieved": [{"chunk_id": "c1", "text": "Settings...", "score": 0.9}]}
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not ...}


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_bad_lines_are_reported_and_good_ones_kept(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", [
        json.dumps(_record(query_id="q1", citations=[{"claim": "Open settings.", "chunk_id": "c1"}],
                           system_id="prod", feedback={"rating": 1, "comment": None})),
        "{not json",
        json.dumps(_record(timestamp="yesterday")),
        "",
        json.dumps(_record(question=...)),
        json.dumps(_record(retrieved=[{"chunk_id": "c1", "text": "a", "score": 1},
                                      {"chunk_id": 7, "text": "b", "score": 0.5}])),
    ])
    _write(tmp_path / "b.jsonl", [json.dumps(_record(answer=None)),
                                  json.dumps(_record(timestamp="2024-05-01T10:00:00"))])
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")

    read = read_logs(tmp_path)

    assert [r.query_id for r in read.records][0] == "q1"
    assert len(read.records) == 2
    first = read.records[0]
    assert first.timestamp == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert first.feedback is not None and first.feedback.rating == 1
    response = first.to_response()
    assert response.ok and response.item_id == "q1" and response.retrieved[0].rank == 1
    assert response.citations[0].chunk_id == "c1"
    assert not read.records[1].to_response().ok  # null answer counts as a failure
    defaulted = read.records[1].query_id  # no query_id: derived from file and line, stable across reads
    assert len(defaulted) == 16 and defaulted == read_logs(tmp_path).records[1].query_id

    bad = {(b.file, b.line): b.reason for b in read.bad_lines}
    assert bad[("a.jsonl", 2)].startswith("not valid JSON: ")
    assert bad[("a.jsonl", 3)] == "timestamp: not ISO-8601"
    assert bad[("a.jsonl", 5)] == "question: missing"
    assert bad[("a.jsonl", 6)] == "retrieved[1].chunk_id: expected a string"
    assert bad[("b.jsonl", 2)].startswith("timestamp: no timezone")
    assert len(read.bad_lines) == 5
    assert all(isinstance(b, BadLine) for b in read.bad_lines)


def test_an_unpaired_surrogate_is_a_bad_line_and_a_byte_order_mark_costs_no_record(tmp_path: Path) -> None:
    """A tester's cases: a question holding the escape \\ud800 passed the parser and then stopped the scoring of
    its whole day where it was hashed; a file another service wrote with a BOM lost its first record."""
    (tmp_path / "a.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(_record(query_id="q1")).encode() + b"\n"
                                       + json.dumps(_record(query_id="q2", question="\ud800 x")).encode() + b"\n")
    read = read_logs(tmp_path)
    assert [r.query_id for r in read.records] == ["q1"]
    assert [(b.file, b.line, b.reason) for b in read.bad_lines] == [
        ("a.jsonl", 2, "question: contains an unpaired surrogate U+D800 at character 1 (an escape that stands for no "
                       "character)")]


def test_day_filter_uses_the_utc_date(tmp_path: Path) -> None:
    _write(tmp_path / "log.jsonl", [
        json.dumps(_record(query_id="late", timestamp="2024-05-01T23:30:00-02:00")),  # 2024-05-02 in UTC
        json.dumps(_record(query_id="on-day", timestamp="2024-05-01T08:00:00+00:00")),
        json.dumps(["not", "an", "object"]),
    ])
    read = read_logs(tmp_path, day=date(2024, 5, 1))
    assert [r.query_id for r in read.records] == ["on-day"]
    assert [b.reason for b in read.bad_lines] == ["record: expected an object"]
    assert [r.query_id for r in read_logs(tmp_path, day=date(2024, 5, 2)).records] == ["late"]


def test_a_bad_line_is_reported_on_the_day_of_its_nearest_valid_neighbour(tmp_path: Path) -> None:
    _write(tmp_path / "log.jsonl", [
        "{broken before any valid line",
        json.dumps(_record(query_id="d1", timestamp="2024-05-01T08:00:00Z")),
        "{broken on the first day",
        json.dumps(_record(query_id="d2", timestamp="2024-05-02T08:00:00Z")),
        "{broken at the end",
    ])
    _write(tmp_path / "only-bad.jsonl", ["{nothing valid"])
    first, second = read_logs(tmp_path, day=date(2024, 5, 1)), read_logs(tmp_path, day=date(2024, 5, 2))
    assert [(b.file, b.line, b.day) for b in first.bad_lines] == [
        ("log.jsonl", 1, date(2024, 5, 1)), ("log.jsonl", 3, date(2024, 5, 1)), ("only-bad.jsonl", 1, None)]
    assert [(b.file, b.line, b.day) for b in second.bad_lines] == [
        ("log.jsonl", 5, date(2024, 5, 2)), ("only-bad.jsonl", 1, None)]
    assert len(read_logs(tmp_path).bad_lines) == 4


def test_a_score_that_json_allows_only_by_extension_is_a_bad_line_and_rfc3339_lowercase_is_read(tmp_path: Path) -> None:
    """A tester's cases: Python's json reads NaN and Infinity, which no JSON producer may write, and a NaN score
    passed as a number; RFC 3339 allows "2024-05-01t10:00:00z", which was refused as not ISO-8601."""
    (tmp_path / "a.jsonl").write_text("\n".join([
        json.dumps(_record(query_id="q1", timestamp="2024-05-01t10:00:00z")),
        json.dumps(_record(query_id="q2", retrieved=[{"chunk_id": "c1", "text": "a", "score": float("nan")}])),
        json.dumps(_record(query_id="q3", retrieved=[{"chunk_id": "c1", "text": "a", "score": float("-inf")}])),
        json.dumps(_record(query_id="q4", retrieved=[{"chunk_id": "c1", "text": "a", "score": 10 ** 400}])),
    ]) + "\n", encoding="utf-8")
    read = read_logs(tmp_path)
    assert [(r.query_id, r.timestamp) for r in read.records] == [("q1", datetime(2024, 5, 1, 10, tzinfo=UTC))]
    assert [(b.line, b.reason) for b in read.bad_lines] == [
        (2, "retrieved[0].score: expected a finite number, not nan"),
        (3, "retrieved[0].score: expected a finite number, not -inf"),
        (4, "retrieved[0].score: expected a finite number, got an integer of 401 digits")]
