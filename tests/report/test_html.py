"""The HTML report: structure, escaping, empty sections, atomic writes, and a look in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rag_assets.report import html as report
from rag_assets.report.html import MetricSummary, ReportData, render_report, write_report

METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall", "citation_accuracy")
THRESHOLDS = {"faithfulness": 0.8, "answer_relevance": 0.7, "context_precision": 0.6, "context_recall": 0.7,
              "citation_accuracy": None}
TYPES = ("factual", "multi_hop", "abstractive", "comparative", "adversarial", "terminology")
EVIL_QUESTION = "Does <script>alert(1)</script> & \"quotes\" run when the page opens?"
OFFLINE = "offline (deterministic heuristics, not a model's judgment)"


def _summary(name: str, values: np.ndarray, failures: int = 0) -> MetricSummary:
    threshold = THRESHOLDS[name]
    mean = float(values.mean()) if values.size else None
    return MetricSummary(name=name, mean=mean, std=float(values.std()) if values.size else None,
                         n=int(values.size), failures=failures, threshold=threshold,
                         passed=None if threshold is None or mean is None else mean >= threshold)


def sample_data(judge: str = OFFLINE) -> ReportData:
    """A realistic report: 5 metrics, 6 question types, 50 items, 12 past evaluations with gaps."""
    rng = np.random.default_rng(7)
    centres = dict(zip(METRICS, (0.84, 0.72, 0.58, 0.66, 0.9)))
    item_types = np.array([TYPES[i % len(TYPES)] for i in range(50)])
    scores = {m: np.clip(rng.beta(centres[m] * 6, (1 - centres[m]) * 6, size=50), 0, 1) for m in METRICS}
    history = []
    for k in range(12):
        row: dict[str, object] = {"label": f"eval {k + 1}", "created_at": f"2025-05-{k + 1:02d}T09:00:00Z"}
        for i, m in enumerate(METRICS):
            row[m] = round(centres[m] - 0.1 + 0.01 * k + 0.03 * np.sin(k + i), 3)
        history.append(row)
    history[3]["context_recall"] = None  # a gap inside a line
    history[0]["citation_accuracy"] = history[1]["citation_accuracy"] = None  # a metric that started later
    del history[5]["context_precision"]  # a key that is missing altogether
    worst = [
        {"item_id": "q-0007", "question_type": "adversarial", "question": EVIL_QUESTION,
         "faithfulness": 0.0, "answer_relevance": 0.12, "context_precision": 0.0,
         "why": "answered a question the corpus cannot answer instead of declining"},
        {"item_id": "q-0031", "question_type": "multi_hop",
         "question": "Which release first shipped the retry policy that the 2023 incident review recommended, and who approved it?",
         "faithfulness": 0.25, "answer_relevance": 0.61, "context_precision": 0.2,
         "why": "retrieved only one of the two documents the answer needs"},
        {"item_id": "q-0012", "question_type": "comparative", "question": "How does plan A compare to plan B on cost?",
         "faithfulness": 0.5, "answer_relevance": None, "context_precision": 0.33,
         "why": "judge failed on answer relevance; cited a superseded version"},
    ]
    return ReportData(
        title="RAG evaluation — acme-docs <v2>",
        generated_at="2025-05-12T09:30:00Z",
        corpus_version="cv-4f76775b215c",
        golden_version=3,
        rag_system="bm25-top5 + claude-haiku",
        judge=judge,
        metrics=[_summary(m, scores[m], failures=2 if m == "answer_relevance" else 0) for m in METRICS],
        per_type={t: [_summary(m, scores[m][item_types == t]) for m in METRICS if m != "citation_accuracy"
                      or t != "adversarial"] for t in TYPES},
        distributions={m: [float(v) for v in scores[m]] for m in METRICS},
        history=history,
        worst_items=worst,
        diagnosis=["Multi-hop questions lose most on context recall: the retriever returns one of two needed documents.",
                   "Adversarial items are answered instead of declined <b>3</b> times out of 8."],
        gates=[{"gate": "faithfulness ≥ 0.8", "status": "passed", "detail": "0.84 over 50 items"},
               {"gate": "context_precision ≥ 0.6", "status": "failed", "detail": "0.57 over 50 items"},
               {"gate": "judge failures ≤ 2%", "status": "warn", "detail": "2 of 50 (4%) on answer_relevance"}],
        cost={"llm_calls": 212, "cache_hits": 88, "input_tokens": 412_345, "output_tokens": 35_120,
              "dollars": 0.8731},
    )


def _svgs(page: str) -> list[ET.Element]:
    blocks = re.findall(r"<svg\b.*?</svg>", page, flags=re.S)
    return [ET.fromstring(block) for block in blocks]


def test_report_structure_and_charts_parse_as_xml() -> None:
    page = render_report(sample_data())
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    svgs = _svgs(page)
    # per-type bars, one histogram per metric, the trend chart
    assert len(svgs) == 1 + len(METRICS) + 1
    for svg in svgs:
        assert svg.tag.endswith("svg") and svg.get("viewBox")
    bars = svgs[0]
    ns = "{http://www.w3.org/2000/svg}"
    labels = {t.text for t in bars.iter(f"{ns}text")}
    assert set(TYPES) <= labels and set(METRICS) <= labels
    assert len(bars.findall(f"{ns}rect")) >= len(TYPES) * 4  # bars (plus legend swatches)
    trend = svgs[-1]
    assert trend.findall(f"{ns}polyline"), "the trend chart draws lines"
    for name in METRICS:
        assert name in page
    for section in ("metrics", "per-type", "distributions", "trend", "gates", "diagnosis", "worst", "cost"):
        assert f'<section id="{section}">' in page
    assert "n = 50" in page  # histograms show n
    assert "0.873" in page and "412,345" in page  # cost: dollars and tokens


def test_user_text_is_escaped_and_no_script_exists() -> None:
    page = render_report(sample_data())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower()
    assert "&lt;v2&gt;" in page and "<v2>" not in page  # the title too
    assert "&lt;b&gt;3&lt;/b&gt;" in page  # diagnosis sentences are text, not markup
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing is loaded
    assert "https://" not in page


def test_offline_judge_is_very_visible() -> None:
    page = render_report(sample_data())
    assert "OFFLINE JUDGE" in page and 'class="offline-banner"' in page
    assert "not a model&#x27;s judgment" in page
    online = render_report(sample_data(judge="claude-sonnet-4 (LLM judge)"))
    assert 'class="offline-banner"' not in online and "OFFLINE JUDGE" not in online


def test_empty_sections_render_a_note() -> None:
    empty = ReportData(title="empty", generated_at="now", corpus_version="cv-0", golden_version=1,
                       rag_system="none", judge="offline")
    page = render_report(empty)
    assert page.count('class="empty"') == 8
    assert "<svg" not in page
    # partly empty inputs: a metric with no value, a lone history point, a distribution with no value
    data = replace(sample_data(), history=[{"label": "eval 1", "faithfulness": 0.8}],
                   distributions={"faithfulness": []},
                   metrics=[MetricSummary("faithfulness", None, None, 0, 50, 0.8, None)])
    page = render_report(data)
    svgs = _svgs(page)
    ns = "{http://www.w3.org/2000/svg}"
    assert svgs[-1].findall(f"{ns}circle"), "a lone point is drawn as a dot"
    assert "No data: faithfulness" in page


def test_long_history_and_many_labels_stay_readable() -> None:
    history = [{"label": f"eval {i}", "faithfulness": 0.5 + 0.4 * np.sin(i / 9) if i % 17 else None}
               for i in range(200)]
    chart = report.line_chart([str(r["label"]) for r in history], [("faithfulness", [r["faithfulness"] for r in history])],
                              {"faithfulness": report.PALETTE[0]}, title="t")
    svg = ET.fromstring(chart)
    ns = "{http://www.w3.org/2000/svg}"
    tick_labels = [t.text for t in svg.iter(f"{ns}text") if (t.text or "").startswith("eval")]
    assert 2 <= len(tick_labels) <= 10 and tick_labels[-1] == "eval 199"
    assert len(svg.findall(f"{ns}polyline")) >= 10  # broken at each gap
    assert not svg.findall(f"{ns}circle")  # no markers on 200 points


def test_write_report_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out" / "report.html"
    assert write_report(sample_data(), target) == target
    assert target.read_text(encoding="utf-8") == render_report(sample_data())
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]
    assert os.stat(target).st_mode & 0o044  # readable by others, not mkstemp's 0600

    # a failure while replacing leaves the old report whole and no temporary file behind
    calls = []

    def failing_replace(src: str, dst: str) -> None:
        calls.append((src, dst))
        raise OSError("disk gone")

    monkeypatch.setattr(report.os, "replace", failing_replace)
    before = target.read_text(encoding="utf-8")
    with pytest.raises(OSError, match="disk gone"):
        write_report(replace(sample_data(), title="new"), target)
    assert calls and Path(calls[0][0]).parent == target.parent and calls[0][1] == target
    assert target.read_text(encoding="utf-8") == before
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]


# ---------------------------------------------------------------- a look in a real browser


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB or RGBA non-interlaced PNG (what Chromium writes) to an (h, w, c) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color_type, _, _, interlace = header
    assert depth == 8 and color_type in (2, 6) and interlace == 0, header
    channels = 3 if color_type == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros((height, width * channels), dtype=np.uint8)
    prev = np.zeros(width * channels, dtype=np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            row = line
        elif kind == 2:
            row = (line + prev) & 0xFF
        else:  # Sub, Average, Paeth depend on the pixel to the left: byte by byte
            row = np.zeros_like(line)
            for i in range(line.size):
                a = row[i - channels] if i >= channels else 0
                b, c = prev[i], (prev[i - channels] if i >= channels else 0)
                if kind == 1:
                    pred = a
                elif kind == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (line[i] + pred) & 0xFF
        out[y], prev = row, row
    return out.reshape(height, width, channels)


def screenshot(html_path: Path, png_path: Path, width: int = 1280, height: int = 2200) -> None:
    binary = _chromium()
    assert binary is not None
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={png_path}",
             f"--window-size={width},{height}", html_path.resolve().as_uri()],
            check=True, capture_output=True, timeout=180)


def test_screenshot_in_headless_chromium(tmp_path: Path) -> None:
    if _chromium() is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium); the browser check is skipped")
    page = write_report(sample_data(), tmp_path / "report.html")
    png = tmp_path / "out.png"
    screenshot(page, png)
    data = png.read_bytes()
    assert len(data) > 20_000, f"screenshot is only {len(data)} bytes"
    pixels = _png_pixels(data)
    assert pixels.shape[:2] == (2200, 1280)
    rgb = pixels[..., :3].reshape(-1, 3)
    sample = rgb[:: 997]  # a spread of pixels over the whole page
    assert len({tuple(p) for p in sample}) > 5, "the page renders as (nearly) one colour"
    # the offline banner's amber shows near the top: the report is not a blank page
    top = pixels[:200, :, :3].reshape(-1, 3).astype(int)
    assert ((top[:, 0] > 240) & (top[:, 1] > 230) & (top[:, 2] < 225)).any(), "no amber banner at the top"
