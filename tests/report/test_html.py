"""The HTML report: structure, escaping, empty sections, atomic writes, and a look in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rag_assets import files
from rag_assets.report.charts import BUNDLE_MARK, PALETTE, bundle_cache, colors_for, histogram, trend_chart, vega_bundle
from rag_assets.report.html import MetricSummary, ReportData, render_report, write_report
from rag_assets.report.items import Claim, Context, ItemDetail

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
    items = [
        ItemDetail("q-0007", "adversarial", EVIL_QUESTION, "", "Yes, <b>it runs</b> on every page load.",
                   metrics={"faithfulness": 0.0, "answer_relevance": 0.12},
                   claims=[Claim("It runs on every page load.", "fabrication")],
                   contexts=[Context(1, "c-aa", "Scripts are escaped.", False, False)]),
        ItemDetail("q-0031", "multi_hop", "Which release first shipped the retry policy?", "Release 4.2, approved by Ana.",
                   "Release 4.2 shipped it; Bo approved it.",
                   metrics={"faithfulness": 0.5, "answer_relevance": 0.9, "context_precision": 0.5},
                   claims=[Claim("Release 4.2 shipped the retry policy.", "grounded", ("c-r42",)),
                           Claim("Bo approved it.", "inconsistency", ("c-appr",))],
                   contexts=[Context(2, "c-appr", "Ana approved the retry policy.", True, True),
                             Context(1, "c-r42", "Release 4.2 ships the retry policy " + "and more " * 80, True, True)],
                   citations=[("Release 4.2 shipped it", "c-r42")]),
        ItemDetail("q-0040", "factual", "How long do refunds take?", "14 days.", "Refunds take 14 days.",
                   metrics={"faithfulness": 1.0, "answer_relevance": 0.95},
                   claims=[Claim("Refunds take 14 days.", "grounded", ("c-ref",))],
                   contexts=[Context(1, "c-ref", "Refunds are paid within 14 days.", True, None)],
                   failures={"context_precision": "context_precision invalid_output: no verdicts"}),
        ItemDetail("q-0041", "factual", "What is the SLA?", "99.9%.", None, rag_error="timeout after 30 s"),
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
        items=items,
    )


def chart_specs(page: str) -> dict[str, dict]:
    found = re.findall(r'<script type="application/json" data-chart="([^"]+)">(.*?)</script>', page, flags=re.S)
    return {chart_id: json.loads(text) for chart_id, text in found}


def _scale_of(spec: dict) -> dict:
    return spec["encoding"]["color"]["scale"]


def test_report_structure_and_charts_are_vega_lite_specs() -> None:
    page = render_report(sample_data())
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    specs = chart_specs(page)
    # per-type bars, one histogram per metric, the trend chart
    assert list(specs) == ["chart-per-type", *(f"chart-histogram-{i}" for i in range(len(METRICS))), "chart-trend"]
    assert all(spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/") for spec in specs.values())
    bars = specs["chart-per-type"]
    assert {row["group"] for row in bars["data"]["values"]} == set(TYPES)
    assert {row["metric"] for row in bars["data"]["values"]} == set(METRICS)
    assert _scale_of(bars) == {"domain": list(METRICS), "range": list(PALETTE[:len(METRICS)])}
    trend = specs["chart-trend"]
    assert trend["encoding"]["x"]["field"] == "date" and trend["encoding"]["x"]["type"] == "temporal"
    assert trend["data"]["values"][0] == {"date": "2025-05-01T09:00:00Z", "evaluation": "eval 1",
                                          "metric": "faithfulness", "value": pytest.approx(0.74 + 0.03 * np.sin(0))}
    assert [r["value"] for r in trend["data"]["values"] if r["date"].startswith("2025-05-04") and
            r["metric"] == "context_recall"] == [None]  # a gap stays a gap
    histogram = specs["chart-histogram-0"]
    assert len(histogram["layer"][0]["data"]["values"]) == 50 and "n = 50" in json.dumps(histogram)
    assert histogram["layer"][1]["data"]["values"] == [{"threshold": 0.8}]
    for section in ("metrics", "per-type", "distributions", "trend", "gates", "diagnosis", "worst", "items", "cost"):
        assert f'<section id="{section}">' in page
    assert "0.873" in page and "412,345" in page  # cost: dollars and tokens


def test_thirteen_metrics_get_thirteen_colours() -> None:
    names = [f"metric_{i}" for i in range(13)]
    colors = colors_for(names)
    assert len(set(colors.values())) == 13


def test_items_drill_down() -> None:
    page = render_report(sample_data())
    rows = re.findall(r'<details class="item" (.*?)>(.*?)</details>', page, flags=re.S)
    assert [re.search(r"<code>(.*?)</code>", body).group(1) for _, body in rows] == ["q-0007", "q-0031", "q-0040", "q-0041"]
    attrs, body = rows[1]
    assert 'data-type="multi_hop"' in attrs and 'data-verdicts="grounded inconsistency"' in attrs
    assert 'data-low="faithfulness context_precision"' in attrs  # 0.5 < 0.8 and 0.5 < 0.6; 0.9 >= 0.7
    assert ('<li class="claim v-inconsistency" data-verdict="inconsistency"><span class="verdict">inconsistency</span> '
            "Bo approved it. <small>checked against: c-appr</small></li>") in body
    ranks = re.findall(r"<strong>#(\d)</strong> <code>(.*?)</code>", body)
    assert ranks == [("1", "c-r42"), ("2", "c-appr")]
    assert ("and more " * 80).strip() in body  # the context whole, not cut
    assert "Release 4.2 shipped it <code>[c-r42]</code>" in body
    assert "context_precision invalid_output: no verdicts" in rows[2][1]
    assert "<span class=\"mark none\">not judged</span>" in rows[2][1]
    assert "The RAG system failed on this item: timeout after 30 s" in rows[3][1]
    assert '<select data-filter="verdicts"><option value="">any</option><option value="fabrication">' in page


def test_user_text_is_escaped_and_nothing_is_loaded() -> None:
    page = render_report(sample_data())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Yes, &lt;b&gt;it runs&lt;/b&gt;" in page
    assert "&lt;v2&gt;" in page and "<v2>" not in page  # the title too
    assert "&lt;b&gt;3&lt;/b&gt;" in page  # diagnosis sentences are text, not markup
    # inside chart specs user text is JSON with '<' escaped: no text can close the script element
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert len(scripts) == 2 + len(chart_specs(page)) + 1  # vega bundle, drawing, specs, filter
    assert page.count("</script>") == len(scripts)
    markup = re.sub(r"(<script\b[^>]*>).*?</script>", r"\1", page, flags=re.S)  # the page without script bodies
    assert not re.search(r"<(script|img|link|iframe)\b[^>]*\b(src|href)=", markup)  # nothing is loaded
    assert "@import" not in page


def test_data_never_runs_as_code() -> None:
    """Markup and template syntax in any text of the data stay text: no script runs, no expression is
    evaluated, and no text in a chart spec closes its script element."""
    evil = "<script>alert(1)</script> {{ 7*7 }} {% if true %}yes{% endif %} {# gone? #}"
    shown = "&lt;script&gt;alert(1)&lt;/script&gt; {{ 7*7 }} {% if true %}yes{% endif %} {# gone? #}"
    item = ItemDetail("q-evil", evil, "Q " + evil, "R " + evil, "A " + evil, metrics={"faithfulness": 0.2},
                      claims=[Claim("C " + evil, "fabrication", ("c-1",))],
                      contexts=[Context(1, "c-1", "X " + evil, True, None)], citations=[("S " + evil, "c-1")],
                      failures={"answer_relevance": "F " + evil})
    data = replace(sample_data(), title="T " + evil, items=[item], diagnosis=["D " + evil],
                   gates=[{"gate": "G " + evil, "status": evil, "detail": "E " + evil}],
                   calibration={"faithfulness": "K " + evil}, cost={"note": "N " + evil},
                   per_type={evil: [MetricSummary("faithfulness", 0.5, n=1)]}, history_note="H " + evil)
    page = render_report(data)
    for prefix in "TQRACXSFDGEKNH":
        assert f"{prefix} {shown}" in page, prefix
    assert f'data-type="{shown}"' in page  # in an attribute too
    assert "<script>alert" not in page
    specs = chart_specs(page)
    assert specs["chart-per-type"]["data"]["values"][0]["group"] == evil  # the spec's JSON holds it whole
    assert len(re.findall(r"<script\b[^>]*>", page)) == 2 + len(specs) + 1 == page.count("</script>")


def test_offline_judge_is_very_visible() -> None:
    page = render_report(sample_data())
    assert "OFFLINE JUDGE" in page and 'class="offline-banner"' in page
    assert "not a model&#39;s judgment" in page
    online = render_report(sample_data(judge="claude-sonnet-4 (LLM judge)"))
    assert 'class="offline-banner"' not in online and "OFFLINE JUDGE" not in online


def test_a_golden_set_nobody_reviewed_is_said_in_a_banner_and_only_then() -> None:
    assert "UNREVIEWED" not in render_report(sample_data())
    page = render_report(replace(sample_data(), unreviewed="UNREVIEWED: 3 of 4 golden items were accepted <without> review"))
    assert ('<div class="unreviewed-banner"><strong>UNREVIEWED GOLDEN SET</strong> — UNREVIEWED: 3 of 4 golden '
            "items were accepted &lt;without&gt; review</div>") in page


def test_empty_sections_render_a_note() -> None:
    empty = ReportData(title="empty", generated_at="now", corpus_version="cv-0", golden_version=1,
                       rag_system="none", judge="offline")
    page = render_report(empty)
    assert page.count('class="empty"') == 10
    assert not chart_specs(page)
    # partly empty inputs: a metric with no value, a lone history point, a distribution with no value
    data = replace(sample_data(), history=[{"label": "eval 1", "created_at": "2025-05-01", "faithfulness": 0.8}],
                   distributions={"faithfulness": []},
                   metrics=[MetricSummary("faithfulness", None, None, 0, 50, 0.8, None)])
    page = render_report(data)
    trend = chart_specs(page)["chart-trend"]
    assert trend["mark"] == {"type": "line", "point": True}, "a lone point is drawn as a dot"
    assert "No data: faithfulness" in page


def test_the_trend_says_what_it_leaves_out_and_why() -> None:
    note = "2 earlier evaluations scored by another judge configuration left out of the trend."
    page = render_report(replace(sample_data(), history_note=note))
    assert ('<h2>Trend</h2><p class="note">12 evaluations, oldest first, from 2025-05-01T09:00:00Z to '
            f'2025-05-12T09:00:00Z. Gaps are missing values. {note}</p>') in page
    alone = render_report(replace(sample_data(), history=[], history_note=note))
    assert (f'<h2>Trend</h2><p class="note">{note}</p><p class="empty">No data: no earlier evaluation to compare '
            "with.</p>") in alone
    assert '<h2>Trend</h2><p class="note">12 evaluations, oldest first, from 2025-05-01T09:00:00Z to ' \
           '2025-05-12T09:00:00Z. Gaps are missing values.</p>' in render_report(sample_data())


def test_long_history_is_on_a_date_axis() -> None:
    history = [{"label": f"eval {i}", "created_at": f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}T08:00:00Z",
                "faithfulness": 0.5 + 0.4 * np.sin(i / 9) if i % 17 else None} for i in range(200)]
    spec = trend_chart(history, ["faithfulness"], {"faithfulness": PALETTE[0]}, title="t")
    assert spec["encoding"]["x"]["axis"]["format"] == "%Y-%m-%d"
    values = spec["data"]["values"]
    assert len(values) == 200 and values[-1]["date"] == "2025-08-04T08:00:00Z"
    assert sum(v["value"] is None for v in values) == 12  # every 17th is a gap


def test_histogram_specs_are_those_altair_gave() -> None:
    """The specs are written as dicts; these are altair 6.3's ``to_dict()`` for the same two charts, so the
    page draws as it did (the data moves to the bars' layer once the threshold rule has data of its own)."""
    bars = {"mark": {"color": "#1f77b4", "type": "bar"}, "encoding": {
        "tooltip": [{"bin": {"extent": [0, 1], "step": 0.1}, "field": "value", "type": "quantitative"},
                    {"aggregate": "count", "type": "quantitative"}],
        "x": {"bin": {"extent": [0, 1], "step": 0.1}, "field": "value", "title": "n = 3 · mean 0.557",
              "type": "quantitative"},
        "y": {"aggregate": "count", "title": "items", "type": "quantitative"}}}
    top = {"$schema": "https://vega.github.io/schema/vega-lite/v6.4.1.json",
           "config": {"view": {"continuousHeight": 300, "continuousWidth": 300}}, "height": 150,
           "title": "faithfulness", "width": "container"}
    data = {"values": [{"value": 0.1}, {"value": 1.0}, {"value": 0.5}]}
    assert histogram([0.1, 1.07, 0.5], PALETTE[0], title="faithfulness") == {**top, "data": data, "layer": [bars]}
    rule = {"data": {"values": [{"threshold": 0.7}]}, "encoding": {"x": {"field": "threshold", "type": "quantitative"}},
            "mark": {"color": "#b91c1c", "strokeDash": [4, 3], "type": "rule"}}
    assert histogram([0.1, 1.07, 0.5], PALETTE[0], title="faithfulness", threshold=0.7) == {
        **top, "layer": [{"data": data, **bars}, rule]}


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

    monkeypatch.setattr(files.os, "replace", failing_replace)  # the one-step writer the report uses
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


# The checks a person would make by hand, run inside the page after it loaded; the result lands in the DOM.
DOM_PROBE = """<script>
(function(){
  function visibleIds(){ return Array.from(document.querySelectorAll('details.item'))
    .filter(function(d){ return d.checkVisibility(); })
    .map(function(d){ return d.querySelector('summary code').textContent; }); }
  function pick(name, value){ var s = document.querySelector('select[data-filter=' + name + ']');
    s.value = value; s.dispatchEvent(new Event('change')); }
  function probe(){
    var r = {}, items = document.querySelectorAll('details.item');
    var first = items[1], claims = first.querySelector('ul.claims');
    r.items = items.length;
    r.closedVisible = claims.checkVisibility();
    first.open = true;
    r.openVisible = claims.checkVisibility(); r.openHeight = claims.offsetHeight;
    r.claimVerdicts = Array.from(first.querySelectorAll('li.claim')).map(function(li){
      return [li.dataset.verdict, getComputedStyle(li.querySelector('.verdict')).backgroundColor]; });
    r.all = visibleIds();
    pick('verdicts', 'inconsistency'); r.inconsistency = visibleIds();
    pick('verdicts', ''); pick('type', 'factual'); r.factual = visibleIds();
    r.shownNote = document.querySelector('.filters .shown').textContent;
    pick('type', ''); pick('low', 'faithfulness'); r.lowFaithfulness = visibleIds();
    pick('low', '');
    r.tables = Array.from(document.querySelectorAll('table')).map(function(t){
      var box = t.closest('section');
      var inner = box.clientWidth - parseFloat(getComputedStyle(box).paddingLeft) - parseFloat(getComputedStyle(box).paddingRight);
      return [t.className, Math.round(t.getBoundingClientRect().width), Math.round(inner),
              t.parentElement.scrollWidth - t.parentElement.clientWidth]; });
    r.charts = Array.from(document.querySelectorAll('div.vega')).map(function(d){ return !!d.querySelector('svg'); });
    var out = document.createElement('pre'); out.id = 'probe'; out.textContent = JSON.stringify(r);
    document.body.appendChild(out);
  }
  window.reportCharts.then(probe);
})();
</script>"""


def _chromium_flags(profile: str) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}"]


def test_report_in_headless_chromium_expands_marks_filters_and_fits(tmp_path: Path) -> None:
    if _chromium() is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium); the browser check is skipped")
    page = render_report(sample_data())
    probed = tmp_path / "probed.html"
    head, end, tail = page.rpartition("</body>")  # the last one: the vega bundle has that text in it too
    probed.write_text(head + DOM_PROBE + end + tail, encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [_chromium(), *_chromium_flags(profile), "--window-size=900,1600", "--virtual-time-budget=20000",
             "--dump-dom", probed.resolve().as_uri()],
            check=True, capture_output=True, text=True, timeout=180).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S)
    assert found, "the probe did not run: " + dom[-2000:]
    result = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert result["items"] == 4
    assert not result["closedVisible"] and result["openVisible"] and result["openHeight"] > 20  # it expands
    assert result["claimVerdicts"] == [["grounded", "rgb(209, 250, 229)"], ["inconsistency", "rgb(254, 243, 199)"]]
    assert result["all"] == ["q-0007", "q-0031", "q-0040", "q-0041"]
    assert result["inconsistency"] == ["q-0031"]
    assert result["factual"] == ["q-0040", "q-0041"] and result["shownNote"] == "2 of 4 items shown"
    assert result["lowFaithfulness"] == ["q-0007", "q-0031"]
    assert len(result["tables"]) == 4
    for name, width, container, overflow in result["tables"]:
        assert width <= container and overflow == 0, (name, width, container, overflow)
    assert result["charts"] == [True] * (2 + len(METRICS)), "every chart was drawn as SVG, offline"


def test_each_metric_shows_its_judge_calibration_beside_it() -> None:
    data = replace(sample_data(), calibration={"faithfulness": "judge agreement with your experts κ=0.72, n=40",
                                               "answer_relevance": "judge not calibrated with your experts"})
    page = render_report(data)
    row = page[page.index("<strong>faithfulness</strong>"):].split("</tr>")[0]
    assert '<br><small class="calibration">judge agreement with your experts κ=0.72, n=40</small>' in row
    assert '<strong>answer_relevance</strong><br><small class="calibration">judge not calibrated' in page
    assert page.count('class="calibration"') == 2  # retrieval metrics have no judge to calibrate


def test_each_metric_shows_its_judge_probes_beside_it():
    data = replace(sample_data(), probes={"faithfulness": "judge probes on ev-7: fabricated_claim 1.00, repeat 1.00"})
    page = render_report(data)
    row = page[page.index("<strong>faithfulness</strong>"):].split("</tr>")[0]
    assert '<br><small class="probes">judge probes on ev-7: fabricated_claim 1.00, repeat 1.00</small>' in row
    assert page.count('class="probes"') == 1


@pytest.fixture
def fresh_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty user cache folder, and no bundle held by this process before or after the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    vega_bundle.cache_clear()
    yield tmp_path
    vega_bundle.cache_clear()


def test_the_vega_bundle_is_made_once_per_version_and_read_back_by_the_next_process(fresh_bundle: Path):
    made = vega_bundle()
    kept = bundle_cache()
    assert kept.parent == fresh_bundle / "rag_assets" and kept.name.startswith("vega-bundle-")
    assert kept.read_text(encoding="utf-8") == made and BUNDLE_MARK in made
    kept.write_text(made + "// kept", encoding="utf-8")
    vega_bundle.cache_clear()  # as a new process
    assert vega_bundle() == made + "// kept", "the kept bundle is read, not made again"
    kept.write_text("half a bundle", encoding="utf-8")
    vega_bundle.cache_clear()
    assert vega_bundle() == made and kept.read_text(encoding="utf-8") == made, "a file that is no bundle is remade"
