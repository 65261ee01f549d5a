"""A self-contained HTML evaluation report: one file, inline CSS and inline SVG, no JavaScript.

``render_report(ReportData) -> str`` builds the page; ``write_report`` writes it atomically. The page
loads nothing (no fonts, CDNs or scripts), so it opens offline and can be attached to a ticket.
Every text that reaches the page goes through ``html.escape``: questions come from users and LLMs.

Metric values are taken to lie in [0, 1] (every score of this project does): the bar and trend
charts use that axis and clip to it, and histograms have 10 bins on it.
"""

from __future__ import annotations

import html
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# Okabe-Ito: stays distinguishable under the common forms of colour-blindness (yellow last: faint on white).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
STATUS_CLASSES = {"passed": "pass", "pass": "pass", "failed": "fail", "fail": "fail", "warn": "warn",
                  "warning": "warn"}


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a set of items: ``passed`` is None when the metric has no threshold."""

    name: str
    mean: float | None
    std: float | None = None
    n: int = 0
    failures: int = 0
    threshold: float | None = None
    passed: bool | None = None


@dataclass(frozen=True)
class ReportData:
    """Everything the report shows; every section may be empty (it then shows a note)."""

    title: str
    generated_at: str
    corpus_version: str
    golden_version: int
    rag_system: str
    judge: str
    metrics: Sequence[MetricSummary] = ()
    per_type: Mapping[str, Sequence[MetricSummary]] = field(default_factory=dict)
    distributions: Mapping[str, Sequence[float]] = field(default_factory=dict)
    history: Sequence[Mapping[str, object]] = ()  # oldest first: {"label", "created_at", <metric>: float|None}
    worst_items: Sequence[Mapping[str, object]] = ()  # item_id, question_type, question, <metric>..., why
    diagnosis: Sequence[str] = ()
    gates: Sequence[Mapping[str, object]] = ()  # gate, status (passed/failed/warn), detail
    cost: Mapping[str, object] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        return "offline" in self.judge.lower()


# ---------------------------------------------------------------- formatting


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def _defined(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _num(value: object, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if _defined(value) else "—"


def _value(key: str, value: object) -> str:
    """A cost or table value as text: thousands separators, dollars for money keys."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—"
        if any(word in key.lower() for word in ("dollar", "usd", "cost", "price")):
            return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.4f}"
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def _clip01(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- SVG helpers


def _text(x: float, y: float, text: object, *, anchor: str = "middle", size: int = 12,
          cls: str = "", rotate: float | None = None) -> str:
    turn = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate else ""
    klass = f' class="{cls}"' if cls else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{klass}{turn}>'
            f"{_e(text)}</text>")


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#c8ccd2", dash: str = "") -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"{dashed}/>'


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str = "") -> str:
    title = f"<title>{_e(tip)}</title>" if tip else ""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" fill="{fill}">{title}</rect>'


def _svg(width: int, height: int, title: str, body: Sequence[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{_e(title)}"><title>{_e(title)}</title>'
            + "".join(body) + "</svg>")


def _no_data(what: str) -> str:
    return f'<p class="empty">No data: {_e(what)}.</p>'


def _nice_max(value: float) -> tuple[float, float]:
    """A round axis maximum of at least ``value`` and its tick step (about 4 ticks)."""
    raw = max(value, 1) / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    step = max(step, 1) if value >= 1 else step
    return step * math.ceil(max(value, 1) / step), step


def _y_axis(left: float, top: float, width: float, height: float, top_value: float, step: float,
            fmt: str = "{:g}") -> list[str]:
    """Horizontal grid lines with labels from 0 to ``top_value``, and the baseline."""
    parts, tick = [], 0.0
    while tick <= top_value + 1e-9:
        y = top + height - tick / top_value * height
        parts.append(_line(left, y, left + width, y, "#e4e7eb"))
        parts.append(_text(left - 6, y + 4, fmt.format(tick), anchor="end", size=11, cls="tick"))
        tick += step
    parts.append(_line(left, top + height, left + width, top + height, "#6b7280"))
    parts.append(_line(left, top, left, top + height, "#6b7280"))
    return parts


def _legend(names: Sequence[str], colors: Mapping[str, str], x: float, y: float, width: float) -> tuple[list[str], float]:
    """Swatches and names in rows that wrap at ``width``; returns the parts and the height used."""
    parts, cx, cy = [], x, y
    for name in names:
        label = _short(name, 28)
        item_w = 22 + 7 * len(label) + 18
        if cx > x and cx + item_w > x + width:
            cx, cy = x, cy + 20
        parts.append(_rect(cx, cy, 12, 12, colors[name]))
        parts.append(_text(cx + 18, cy + 10, label, anchor="start", size=12))
        cx += item_w
    return parts, (cy - y) + 20 if names else 0


def colors_for(names: Sequence[str]) -> dict[str, str]:
    """One stable colour per metric name, in the given order."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


# ---------------------------------------------------------------- charts


def bar_chart(groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]],
              colors: Mapping[str, str], *, title: str, width: int = 960, height: int = 340) -> str:
    """Grouped bars on [0, 1]: one group per entry of ``groups``, one bar per series within it."""
    if not groups or not series:
        return _no_data(title)
    legend, legend_h = _legend([name for name, _ in series], colors, 52, 8, width - 60)
    chars = min(max(len(g) for g in groups), 18)
    rotate = chars * 7 > (width - 68) / len(groups) - 8  # labels wider than a group turn by 35°
    # a turned label reaches 5.4 px left and 3.8 px down per character (12 px text)
    left = max(52, 5.4 * chars + 10 - (width - 68) / len(groups) / 2) if rotate else 52
    top, bottom = 16 + legend_h, (3.8 * chars + 30 if rotate else 36)
    plot_w, plot_h = width - left - 16, height - top - bottom
    group_w = plot_w / len(groups)
    parts = legend + _y_axis(left, top, plot_w, plot_h, 1.0, 0.25, "{:.2f}")
    bar_w = group_w * 0.8 / len(series)
    for gi, group in enumerate(groups):
        x0 = left + gi * group_w + group_w * 0.1
        for si, (name, values) in enumerate(series):
            value = values[gi] if gi < len(values) else None
            if not _defined(value):
                continue
            h = _clip01(value) * plot_h
            parts.append(_rect(x0 + si * bar_w + 1, top + plot_h - h, bar_w - 2, h, colors[name],
                               f"{group} · {name}: {value:.3f}"))
        cx = left + gi * group_w + group_w / 2
        if rotate:
            parts.append(_text(cx + 4, top + plot_h + 14, _short(group, 18), anchor="end", rotate=-35))
        else:
            parts.append(_text(cx, top + plot_h + 20, group))
    return _svg(width, height, title, parts)


def histogram(values: Sequence[float], color: str, *, title: str, threshold: float | None = None,
              bins: int = 10, width: int = 320, height: int = 210) -> str:
    """Counts of ``values`` in ``bins`` equal bins on [0, 1] (values outside are clipped to it)."""
    data = np.asarray([v for v in values if _defined(v)], dtype=float)
    if data.size == 0:
        return _no_data(title)
    counts, edges = np.histogram(np.clip(data, 0.0, 1.0), bins=bins, range=(0.0, 1.0))
    top_value, step = _nice_max(float(counts.max()))
    left, top, plot_w, plot_h = 40, 42, width - 40 - 12, height - 42 - 34
    parts = [_text(left, 16, f"{title}  ·  n = {data.size}  ·  mean {data.mean():.3f}", anchor="start",
                   size=12, cls="head")]
    parts += _y_axis(left, top, plot_w, plot_h, top_value, step)
    bar_w = plot_w / bins
    for i, count in enumerate(counts):
        h = count / top_value * plot_h
        parts.append(_rect(left + i * bar_w + 1, top + plot_h - h, bar_w - 2, h, color,
                           f"[{edges[i]:.1f}, {edges[i + 1]:.1f}{']' if i == bins - 1 else ')'}: {count}"))
    for i in range(0, bins + 1, 2):
        parts.append(_text(left + i * bar_w, top + plot_h + 16, f"{edges[i]:.1f}", size=11, cls="tick"))
    if _defined(threshold):
        x = left + _clip01(threshold) * plot_w
        parts.append(_line(x, top - 12, x, top + plot_h, "#b91c1c", "4 3"))
        anchor = "end" if threshold > 0.6 else "start"
        parts.append(_text(x + (-4 if anchor == "end" else 4), top - 4, f"threshold {threshold:g}",
                           anchor=anchor, size=10, cls="thr"))
    return _svg(width, height, title, parts)


def line_chart(labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]],
               colors: Mapping[str, str], *, title: str, width: int = 960, height: int = 320) -> str:
    """Lines on [0, 1] over ``labels``; a missing value breaks the line, a lone point is a dot."""
    n = len(labels)
    if n == 0 or not any(_defined(v) for _, values in series for v in values):
        return _no_data(title)
    legend, legend_h = _legend([name for name, _ in series], colors, 52, 8, width - 60)
    left, top, right, bottom = 52, 16 + legend_h, 36, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = legend + _y_axis(left, top, plot_w, plot_h, 1.0, 0.25, "{:.2f}")

    def x_of(i: int) -> float:
        return left + (plot_w / 2 if n == 1 else i * plot_w / (n - 1))

    def y_of(v: float) -> float:
        return top + plot_h - _clip01(v) * plot_h

    step = max(1, math.ceil((n - 1) / 7))  # at most 8 labels, the last one always shown
    ticks = list(range(0, n, step))
    if ticks[-1] != n - 1:
        if n - 1 - ticks[-1] < 0.6 * step and len(ticks) > 1:
            ticks.pop()
        ticks.append(n - 1)
    for i in ticks:
        parts.append(_line(x_of(i), top + plot_h, x_of(i), top + plot_h + 4, "#6b7280"))
        parts.append(_text(x_of(i), top + plot_h + 18, _short(str(labels[i]), 16), size=11, cls="tick"))
    markers = n <= 40  # past that, dots only where a point stands alone
    for name, values in series:
        ys = [v if _defined(v) else None for v in list(values[:n]) + [None] * (n - len(values))]
        run: list[str] = []
        for i, v in enumerate([*ys, None]):
            if v is not None:
                run.append(f"{x_of(i):.1f},{y_of(v):.1f}")
            elif len(run) > 1:
                parts.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{colors[name]}" stroke-width="2"/>')
            if v is None:
                run = []
        for i, v in enumerate(ys):
            lone = (i == 0 or ys[i - 1] is None) and (i == n - 1 or ys[i + 1] is None)
            if v is not None and (markers or lone):
                parts.append(f'<circle cx="{x_of(i):.1f}" cy="{y_of(v):.1f}" r="3.5" fill="{colors[name]}">'
                             f"<title>{_e(labels[i])} · {_e(name)}: {v:.3f}</title></circle>")
    return _svg(width, height, title, parts)


# ---------------------------------------------------------------- sections


def _metric_names(data: ReportData) -> list[str]:
    """Every metric name, in the order the overall table gives, then as first met elsewhere."""
    names: dict[str, None] = {m.name: None for m in data.metrics}
    for summaries in data.per_type.values():
        names.update({m.name: None for m in summaries})
    names.update({name: None for name in data.distributions})
    return list(names)


def _badge(status: object) -> str:
    text = "—" if status is None else str(status)
    cls = STATUS_CLASSES.get(text.lower(), "none")
    return f'<span class="badge {cls}">{_e(text)}</span>'


def _pass_badge(passed: bool | None) -> str:
    return _badge(None if passed is None else ("passed" if passed else "failed"))


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """A table from already-escaped cells."""
    head = "".join(f"<th>{_e(h).replace('_', '_<wbr>')}</th>" for h in headers)  # long names may wrap
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _section(anchor: str, title: str, content: str, note: str = "") -> str:
    sub = f'<p class="note">{_e(note)}</p>' if note else ""
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{sub}{content}</section>'


def _header(data: ReportData) -> str:
    judge_cls = "judge offline" if data.offline else "judge"
    banner = (f'<div class="offline-banner"><strong>OFFLINE JUDGE</strong> — these scores come from '
              f"deterministic heuristics, not from a model's judgment. Judge: {_e(data.judge)}</div>"
              if data.offline else "")
    facts = [("generated", data.generated_at), ("corpus version", data.corpus_version),
             ("golden set", f"v{data.golden_version}"), ("RAG system", data.rag_system)]
    items = "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in facts)
    items += f'<div class="{judge_cls}"><dt>judge</dt><dd>{_e(data.judge)}</dd></div>'
    return f"<header>{banner}<h1>{_e(data.title)}</h1><dl class=\"facts\">{items}</dl>{_verdict(data)}</header>"


def _verdict(data: ReportData) -> str:
    judged = [m for m in data.metrics if m.passed is not None]
    parts = []
    if judged:
        ok = sum(m.passed for m in judged)
        parts.append(f'<span class="{"pass" if ok == len(judged) else "fail"}">{ok} of {len(judged)} '
                     "metrics meet their threshold</span>")
    statuses = [STATUS_CLASSES.get(str(g.get("status", "")).lower(), "none") for g in data.gates]
    if statuses:
        failed, warned = statuses.count("fail"), statuses.count("warn")
        cls = "fail" if failed else ("warn" if warned else "pass")
        parts.append(f'<span class="{cls}">{len(statuses) - failed - warned} of {len(statuses)} gates '
                     f"passed, {failed} failed, {warned} warned</span>")
    return f'<p class="verdict">{" · ".join(parts)}</p>' if parts else ""


def _metrics_section(data: ReportData, colors: Mapping[str, str]) -> str:
    if not data.metrics:
        return _section("metrics", "Metrics", _no_data("no metric was scored"))
    rows = []
    for m in data.metrics:
        meter = ""
        if _defined(m.mean):
            mark = f'<i style="left:{_clip01(m.threshold) * 100:.1f}%"></i>' if _defined(m.threshold) else ""
            meter = (f'<div class="meter"><span style="width:{_clip01(m.mean) * 100:.1f}%;'
                     f'background:{colors[m.name]}"></span>{mark}</div>')
        spread = f" <small>± {_num(m.std)}</small>" if _defined(m.std) else ""
        fail_cls = ' class="warn-text"' if m.failures else ""
        rows.append([f"<strong>{_e(m.name)}</strong>", f"{_num(m.mean)}{spread}", meter, f"{m.n:,}",
                     f"<span{fail_cls}>{m.failures:,}</span>", _num(m.threshold, 2), _pass_badge(m.passed)])
    table = _table(["metric", "mean ± std", "", "n", "judge failures", "threshold", "status"], rows, "metrics")
    return _section("metrics", "Metrics", table,
                    "Mean over the items the judge scored; judge failures are left out of the mean.")


def _per_type_section(data: ReportData, names: Sequence[str], colors: Mapping[str, str]) -> str:
    if not data.per_type:
        return _section("per-type", "By question type", _no_data("no per-type breakdown"))
    types = list(data.per_type)
    by_type = {t: {m.name: m for m in data.per_type[t]} for t in types}
    used = [n for n in names if any(n in by_type[t] for t in types)]
    series = [(n, [getattr(by_type[t].get(n), "mean", None) for t in types]) for n in used]
    chart = bar_chart(types, series, colors, title="Mean score by question type")
    rows = []
    for t in types:
        cells = [f"<strong>{_e(t)}</strong>"]
        for n in used:
            m = by_type[t].get(n)
            if m is None:
                cells.append("—")
                continue
            cls = ' class="below"' if m.passed is False else ""
            cells.append(f"<span{cls}>{_num(m.mean)}</span> <small>n={m.n}</small>")
        rows.append(cells)
    table = _table(["question type", *used], rows, "per-type")
    return _section("per-type", "By question type", f'<div class="chart">{chart}</div>{table}',
                    "Red values are below the metric's threshold.")


def _distributions_section(data: ReportData, colors: Mapping[str, str]) -> str:
    if not data.distributions:
        return _section("distributions", "Score distributions", _no_data("no per-item scores"))
    thresholds = {m.name: m.threshold for m in data.metrics}
    charts = "".join(f'<div class="chart">{histogram(values, colors[name], title=name, threshold=thresholds.get(name))}</div>'
                     for name, values in data.distributions.items())
    return _section("distributions", "Score distributions", f'<div class="grid">{charts}</div>',
                    "Per-item scores in 10 bins on [0, 1]; the dashed line is the threshold.")


def _trend_section(data: ReportData, names: Sequence[str], colors: Mapping[str, str]) -> str:
    history = list(data.history)
    used = [n for n in names if any(_defined(row.get(n)) for row in history)]
    if not history or not used:
        return _section("trend", "Trend", _no_data("no earlier evaluation to compare with"))
    labels = [str(row.get("label", i + 1)) for i, row in enumerate(history)]
    series = [(n, [row.get(n) if _defined(row.get(n)) else None for row in history]) for n in used]
    chart = line_chart(labels, series, colors, title="Metric means over evaluations")
    first, last = history[0].get("created_at", ""), history[-1].get("created_at", "")
    span = f"{len(history)} evaluations, oldest first" + (f", from {first} to {last}" if first and last else "")
    return _section("trend", "Trend", f'<div class="chart">{chart}</div>', span + ". Gaps are missing values.")


def _gates_section(data: ReportData) -> str:
    if not data.gates:
        return _section("gates", "Quality gates", _no_data("no gate was checked"))
    rows = [[_e(g.get("gate", "")), _badge(g.get("status")), _e(g.get("detail", ""))] for g in data.gates]
    return _section("gates", "Quality gates", _table(["gate", "status", "detail"], rows, "gates"))


def _diagnosis_section(data: ReportData) -> str:
    if not data.diagnosis:
        return _section("diagnosis", "Diagnosis", _no_data("nothing to point out"))
    items = "".join(f"<li>{_e(s)}</li>" for s in data.diagnosis)
    return _section("diagnosis", "Diagnosis", f'<ul class="diagnosis">{items}</ul>')


def _worst_section(data: ReportData, names: Sequence[str]) -> str:
    if not data.worst_items:
        return _section("worst", "Worst items", _no_data("no item to show"))
    fixed = ["item_id", "question_type", "question"]
    keys: dict[str, None] = {}
    for row in data.worst_items:
        keys.update({k: None for k in row if k not in fixed and k != "why"})
    metric_cols = [n for n in names if n in keys] + [k for k in keys if k not in names]
    columns = fixed + metric_cols + ["why"]
    rows = []
    for row in data.worst_items:
        cells = []
        for col in columns:
            value = row.get(col)
            text = _num(value) if isinstance(value, float) else _e(_value(col, value))
            cells.append(f'<span class="q">{text}</span>' if col == "question" else text)
        rows.append(cells)
    headers = ["item", "type", "question", *metric_cols, "why"]
    return _section("worst", "Worst items", _table(headers, rows, "worst"),
                    "The items that score lowest, with the reason they do.")


def _cost_section(data: ReportData) -> str:
    if not data.cost:
        return _section("cost", "Cost", _no_data("no cost was recorded"))
    cards = "".join(f'<div class="card"><div class="v">{_e(_value(k, v))}</div><div class="k">'
                    f"{_e(k.replace('_', ' '))}</div></div>" for k, v in data.cost.items())
    return _section("cost", "Cost", f'<div class="cards">{cards}</div>')


CSS = """
:root{--ink:#1f2933;--muted:#6b7280;--line:#e4e7eb;--pass:#047857;--fail:#b91c1c;--warn:#b45309}
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"DejaVu Sans",Arial,sans-serif}
main{max-width:1040px;margin:0 auto;padding:24px}
header,section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:18px 22px;margin-bottom:18px}
h1{margin:0 0 12px;font-size:24px}h2{margin:0 0 10px;font-size:18px}
.note{margin:-4px 0 12px;color:var(--muted);font-size:13px}
.offline-banner{background:#fff4d6;border:2px solid #d97706;color:#7c2d12;border-radius:6px;
padding:10px 14px;margin-bottom:14px;font-size:15px}
.facts{display:flex;flex-wrap:wrap;gap:10px 28px;margin:0}
.facts dt{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.facts dd{margin:0;font-weight:600}
.judge.offline dd{color:#9a3412;background:#fff4d6;padding:0 6px;border-radius:4px}
.verdict{margin:14px 0 0;font-weight:600}.verdict .pass{color:var(--pass)}
.verdict .fail{color:var(--fail)}.verdict .warn{color:var(--warn)}
table{border-collapse:collapse;width:100%;margin-top:6px}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.03em;font-weight:600}
td small{color:var(--muted)}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:600;
background:#eef0f3;color:var(--muted)}
.badge.pass{background:#d1fae5;color:var(--pass)}.badge.fail{background:#fee2e2;color:var(--fail)}
.badge.warn{background:#fef3c7;color:var(--warn)}
.meter{position:relative;width:140px;height:10px;margin-top:5px;background:#eef0f3;border-radius:5px}
.meter span{position:absolute;left:0;top:0;bottom:0;border-radius:5px}
.meter i{position:absolute;top:-3px;bottom:-3px;width:2px;background:var(--ink)}
.below{color:var(--fail);font-weight:600}.warn-text{color:var(--warn);font-weight:600}
.chart svg{width:100%;height:auto;display:block}
.chart svg text{fill:var(--ink);font-family:inherit}.chart svg .tick{fill:var(--muted)}
.chart svg .head{font-weight:600}.chart svg .thr{fill:var(--fail)}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
.diagnosis li{margin-bottom:4px}
.worst .q{display:block;min-width:240px;max-width:380px;overflow-wrap:anywhere}
.worst td:nth-child(-n+2){white-space:nowrap}.worst td:last-child{min-width:200px}
.worst td{font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid var(--line);border-radius:6px;padding:10px 16px;min-width:130px}
.card .v{font-size:20px;font-weight:700}.card .k{color:var(--muted);font-size:12px}
.empty{color:var(--muted);font-style:italic;padding:12px;background:#f9fafb;border:1px dashed var(--line);
border-radius:6px;margin:0}
footer{color:var(--muted);font-size:12px;text-align:center;padding-bottom:24px}
"""


def render_report(data: ReportData) -> str:
    """The whole report as one HTML document (inline CSS and SVG, no script, nothing loaded)."""
    names = _metric_names(data)
    colors = colors_for(names)
    sections = [
        _header(data),
        _metrics_section(data, colors),
        _gates_section(data),
        _diagnosis_section(data),
        _per_type_section(data, names, colors),
        _distributions_section(data, colors),
        _trend_section(data, names, colors),
        _worst_section(data, names),
        _cost_section(data),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(data.title)}</title><style>{CSS}</style></head><body><main>"
            + "\n".join(sections)
            + f"<footer>Generated {_e(data.generated_at)} by rag_assets · one self-contained file</footer>"
            "</main></body></html>\n")


def write_report(data: ReportData, path: Path) -> Path:
    """Render and write atomically: a temporary file beside ``path``, then ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render_report(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a report is meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
