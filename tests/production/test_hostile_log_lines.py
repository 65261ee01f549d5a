"""Hostile production-log lines: each one is a bad line naming its field; none stops the read."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from rag_assets.production.logs import MAX_DEPTH, MAX_LINE_BYTES, read_logs

from tests.production.test_logs import _record, _write


def _reasons(folder: Path) -> dict[int, str]:
    read = read_logs(folder)
    assert [r.query_id for r in read.records] == ["good"]
    return {bad.line: bad.reason for bad in read.bad_lines}


def test_a_timestamp_that_overflows_in_utc_is_a_bad_line_naming_the_timestamp(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", [json.dumps(_record(timestamp="9999-12-31T23:30:00-05:00")),
                                  json.dumps(_record(query_id="good"))])

    assert _reasons(tmp_path) == {
        1: "timestamp: 9999-12-31T23:30:00-05:00 is out of range (cannot be converted to UTC)"}


def test_deep_nesting_and_oversized_lines_are_bad_lines_not_exceptions(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    nested_field = json.dumps(_record(feedback={"comment": "x"})).replace('{"comment": "x"}', "[" * 40 + "]" * 40)
    strings_with_brackets = json.dumps(_record(query_id="good", question="[" * 500 + "?"))
    huge = json.dumps(_record(answer="x" * MAX_LINE_BYTES))
    _write(tmp_path / "a.jsonl", [deep, nested_field, strings_with_brackets, huge])

    assert _reasons(tmp_path) == {
        1: f"record: JSON nested deeper than {MAX_DEPTH} levels",
        2: f"record: JSON nested deeper than {MAX_DEPTH} levels",
        4: f"record: the line is {len(huge.encode()):,} bytes, over the {MAX_LINE_BYTES:,}-byte limit",
    }


def test_a_repeated_query_id_is_reported_as_a_duplicate_on_its_day_and_the_first_line_kept(tmp_path: Path) -> None:
    line = json.dumps(_record(query_id="good"))
    _write(tmp_path / "a.jsonl", [line, line])
    _write(tmp_path / "b.jsonl", [json.dumps(_record(query_id="good", question="Other?"))])

    read = read_logs(tmp_path, date(2024, 5, 1))

    assert [(r.query_id, r.question) for r in read.records] == [("good", "How do I rotate an API key?")]
    assert [(b.file, b.line, b.reason, b.day) for b in read.bad_lines] == [
        ("a.jsonl", 2, "query_id: duplicate of a.jsonl line 1 (the first is kept)", date(2024, 5, 1)),
        ("b.jsonl", 1, "query_id: duplicate of a.jsonl line 1 (the first is kept)", date(2024, 5, 1)),
    ]


def test_nul_in_a_logged_question_is_a_bad_line_naming_the_question(tmp_path: Path) -> None:
    _write(tmp_path / "a.jsonl", [json.dumps(_record(question="Rotate\u0000key?")), json.dumps(_record(query_id="good")),
                                  json.dumps(_record(retrieved=[{"chunk_id": "c\u0007", "text": "t", "score": 1}]))])

    assert _reasons(tmp_path) == {1: "question: contains the control character U+0000 at character 7",
                                  3: "retrieved[0].chunk_id: contains the control character U+0007 at character 2"}


def test_an_overlong_question_is_a_bad_line_naming_the_question(tmp_path: Path) -> None:
    from rag_assets.production.logs import MAX_QUESTION_CHARS

    _write(tmp_path / "a.jsonl", [json.dumps(_record(question="why? " * 1000)), json.dumps(_record(query_id="good")),
                                  json.dumps(_record(question="q" * 20_000_000))])

    assert MAX_QUESTION_CHARS == 4_000
    reasons = _reasons(tmp_path)
    assert reasons[1] == "question: 5,000 characters, over the 4,000-character limit"
    assert reasons[3].startswith("record: the line is 20,000,1") and reasons[3].endswith("over the 1,000,000-byte limit")
