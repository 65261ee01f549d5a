"""Publishing a report to an fsspec URL: a real filesystem (memory://) and a local file:// URL."""

from __future__ import annotations

from pathlib import Path

import fsspec

from rag_assets.report.publish import publish_report


def test_publish_to_memory_and_file_urls(tmp_path: Path) -> None:
    report = tmp_path / "ev-1.html"
    report.write_text("<!DOCTYPE html><p>report</p>", encoding="utf-8")
    assert publish_report(report, "memory://reports/team-a/") == "memory://reports/team-a/ev-1.html"
    assert fsspec.filesystem("memory").cat_file("/reports/team-a/ev-1.html") == report.read_bytes()
    target = tmp_path / "web" / "nested"
    url = publish_report(report, target.as_uri())
    assert url == f"{target.as_uri()}/ev-1.html" and (target / "ev-1.html").read_bytes() == report.read_bytes()
