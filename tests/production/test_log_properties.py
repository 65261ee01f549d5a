"""Property: any production log, however hostile, is read without an exception escaping; every
non-blank line becomes exactly one record or one bad line, and a bad line names its field."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.production.logs import read_logs

FIELDS = ("record", "query_id", "timestamp", "question", "answer", "retrieved", "citations", "system_id",
          "feedback", "not valid")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)
timestamps = st.one_of(st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
                       st.sampled_from(["9999-12-31T23:30:00-05:00", "0001-01-01T00:30:00+01:00", "2024-05-01",
                                        "2024-05-01T10:00:00Z"]), st.text(max_size=10))
chunks = st.fixed_dictionaries({"chunk_id": st.text(max_size=5) | st.integers(), "text": st.text(max_size=20),
                                "score": st.floats(allow_nan=False) | st.text(max_size=3)})
records = st.fixed_dictionaries(
    {"timestamp": timestamps, "question": st.text(max_size=40), "retrieved": st.lists(chunks, max_size=3)},
    optional={"query_id": st.text(max_size=6) | json_values, "answer": st.text(max_size=20) | json_values,
              "citations": json_values, "feedback": json_values, "system_id": json_values},
)
lines = st.one_of(records.map(json.dumps), json_values.map(json.dumps), st.binary(max_size=40),
                  st.integers(1, 200).map(lambda depth: "[" * depth + "]" * depth))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, min_size=1, max_size=8))
def test_any_log_is_read_whole_with_every_line_accounted_for(raw_lines: list[str | bytes]) -> None:
    data = b"\n".join(line if isinstance(line, bytes) else line.encode("utf-8") for line in raw_lines)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "log.jsonl").write_bytes(data)
        read = read_logs(folder)
    non_blank = sum(1 for line in data.splitlines() if line.strip())
    assert len(read.records) + len(read.bad_lines) == non_blank
    for bad in read.bad_lines:
        assert bad.reason.startswith(FIELDS), bad
    for record in read.records:
        assert record.day is not None and "\x00" not in record.question
