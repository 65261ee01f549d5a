"""A day's read of a production log reads only that day's bytes: the first read indexes the folder (byte
ranges per day, kept beside the logs), every later read seeks to its day's ranges."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from rag_assets.production.logs import read_logs

from tests.production.test_logs import _record


class _Counting:
    """A binary file that counts the bytes read from it."""

    def __init__(self, handle, counts: dict[str, int], name: str) -> None:
        self.handle, self.counts, self.name = handle, counts, name

    def _count(self, data):
        self.counts[self.name] = self.counts.get(self.name, 0) + len(data)
        return data

    def read(self, *args):
        return self._count(self.handle.read(*args))

    def readline(self, *args):
        return self._count(self.handle.readline(*args))

    def __iter__(self):
        return (self._count(line) for line in self.handle)

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Bytes read from each ``*.jsonl`` file since the test began (or since the dict was cleared)."""
    counts: dict[str, int] = {}
    real_open = Path.open

    def counting_open(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        return _Counting(handle, counts, self.name) if self.suffix == ".jsonl" and "b" in mode else handle

    monkeypatch.setattr(Path, "open", counting_open)
    return counts


def _lines(day: str, count: int) -> list[str]:
    return [json.dumps(_record(query_id=f"{day}-{i}", timestamp=f"{day}T{i % 24:02d}:00:00Z")) for i in range(count)]


def test_a_days_read_reads_only_that_days_byte_range(tmp_path: Path, bytes_read: dict[str, int]):
    first, second, third = _lines("2024-05-01", 40), _lines("2024-05-02", 25), _lines("2024-05-03", 40)
    second = second[:10] + ["{broken on the second day"] + second[10:]
    log = tmp_path / "served.jsonl"
    log.write_text("\n".join(first + second + third) + "\n", encoding="utf-8")

    assert len(read_logs(tmp_path, date(2024, 5, 1)).records) == 40
    day_bytes = [sum(len(line.encode()) + 1 for line in lines) for lines in (first, second, third)]
    assert bytes_read == {"served.jsonl": log.stat().st_size + day_bytes[0]}, "indexed once, then the day read"
    assert (tmp_path / ".rag-assets-index.json").is_file()
    bytes_read.clear()

    read = read_logs(tmp_path, date(2024, 5, 2))

    assert [r.query_id for r in read.records] == [f"2024-05-02-{i}" for i in range(25)]
    assert [(b.line, b.reason, b.day) for b in read.bad_lines] == [(51, "not valid JSON: Expecting property name "
                                                                        "enclosed in double quotes (column 2)",
                                                                    date(2024, 5, 2))]
    assert bytes_read == {"served.jsonl": day_bytes[1]}, "only the day's lines, the index was not built again"


def test_a_changed_log_is_indexed_again(tmp_path: Path, bytes_read: dict[str, int]):
    log = tmp_path / "served.jsonl"
    log.write_text("\n".join(_lines("2024-05-01", 5)) + "\n", encoding="utf-8")
    assert len(read_logs(tmp_path, date(2024, 5, 2)).records) == 0
    with log.open("a", encoding="utf-8") as out:
        out.write("\n".join(_lines("2024-05-02", 3)) + "\n")
    assert [r.query_id for r in read_logs(tmp_path, date(2024, 5, 2)).records] == [f"2024-05-02-{i}" for i in range(3)]
