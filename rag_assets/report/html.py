"""A self-contained HTML evaluation report: one file with inline CSS, charts and scripts.

``render_report(ReportData) -> str`` builds the page; ``write_report`` writes it atomically, part by
part (``render_parts``). The page loads nothing (no fonts, CDNs or remote scripts): the charts are Vega-Lite specs drawn by the vega
bundle inlined from vl-convert-python (:mod:`rag_assets.report.charts`), and every item can be
expanded and filtered (:mod:`rag_assets.report.items`), so it opens offline and can be attached to a
ticket. Every text that reaches the page goes through ``html.escape`` (or, inside chart specs, JSON
with ``<`` escaped): questions come from users and LLMs.
"""

from __future__ import annotations

import html
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.report.charts import bar_chart, colors_for, embed, histogram, trend_chart, vega_script
from rag_assets.report.compare import EvaluationDiff, baseline_section
from rag_assets.report.items import FILTER_SCRIPT, ItemDetail, items_section

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
    items: Sequence[ItemDetail] = ()  # every item, worst first: the drill-down
    baseline: EvaluationDiff | None = None  # this evaluation (B) against its baseline (A)
    calibration: Mapping[str, str] = field(default_factory=dict)  # metric -> its judge's agreement with the experts

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


def _no_data(what: str) -> str:
    return f'<p class="empty">No data: {_e(what)}.</p>'


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
    return f'<div class="table-wrap"><table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _section_parts(anchor: str, title: str, parts: Iterable[str], note: str = "") -> Iterator[str]:
    sub = f'<p class="note">{_e(note)}</p>' if note else ""
    yield f'<section id="{anchor}"><h2>{_e(title)}</h2>{sub}'
    yield from parts
    yield "</section>"


def _section(anchor: str, title: str, content: str, note: str = "") -> str:
    return "".join(_section_parts(anchor, title, (content,), note))


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
        judge = f'<br><small class="calibration">{_e(data.calibration[m.name])}</small>' if m.name in data.calibration else ""
        rows.append([f"<strong>{_e(m.name)}</strong>{judge}", f"{_num(m.mean)}{spread}", meter, f"{m.n:,}",
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
    bars = [{"group": t, "metric": n, "value": by_type[t][n].mean} for t in types for n in used
            if n in by_type[t] and _defined(by_type[t][n].mean)]
    chart = embed(bar_chart(bars, used, colors, title="Mean score by question type"), "chart-per-type")
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
    charts = "".join(
        f'<div class="chart">{_histogram(name, values, colors[name], thresholds.get(name), index)}</div>'
        for index, (name, values) in enumerate(data.distributions.items()))
    return _section("distributions", "Score distributions", f'<div class="grid">{charts}</div>',
                    "Per-item scores in 10 bins on [0, 1]; the dashed line is the threshold.")


def _histogram(name: str, values: Sequence[float], color: str, threshold: float | None, index: int) -> str:
    defined = [v for v in values if _defined(v)]
    if not defined:
        return _no_data(name)
    return embed(histogram(defined, color, title=name, threshold=threshold if _defined(threshold) else None),
                 f"chart-histogram-{index}")


def _trend_section(data: ReportData, names: Sequence[str], colors: Mapping[str, str]) -> str:
    history = [row for row in data.history if row.get("created_at")]  # the axis is the evaluation date
    used = [n for n in names if any(_defined(row.get(n)) for row in history)]
    if not history or not used:
        return _section("trend", "Trend", _no_data("no earlier evaluation to compare with"))
    dated = [{**row, **{n: row.get(n) if _defined(row.get(n)) else None for n in used}} for row in history]
    chart = embed(trend_chart(dated, used, colors, title="Metric means over evaluations"), "chart-trend")
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


def _items_section(data: ReportData, names: Sequence[str]) -> Iterator[str]:
    thresholds = {m.name: m.threshold for m in data.metrics}
    return _section_parts("items", "Every item", items_section(data.items, names, thresholds),
                          "Worst first. Expand an item for its answer, claims, contexts and metrics; filter with the "
                          "lists.")


def _baseline_section(data: ReportData) -> str:
    if data.baseline is None:
        return _section("baseline", "Against the baseline", _no_data("no baseline evaluation"))
    return _section("baseline", "Against the baseline", baseline_section(data.baseline),
                    "Paired sign-flip permutation tests on the items both evaluations scored.")


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
.table-wrap{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;width:100%;margin-top:6px;table-layout:fixed}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
th{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.03em;font-weight:600}
td small{color:var(--muted)}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:600;
background:#eef0f3;color:var(--muted)}
.badge.pass{background:#d1fae5;color:var(--pass)}.badge.fail{background:#fee2e2;color:var(--fail)}
.badge.warn{background:#fef3c7;color:var(--warn)}
.meter{position:relative;width:100%;max-width:140px;height:10px;margin-top:5px;background:#eef0f3;border-radius:5px}
.meter span{position:absolute;left:0;top:0;bottom:0;border-radius:5px}
.meter i{position:absolute;top:-3px;bottom:-3px;width:2px;background:var(--ink)}
.below{color:var(--fail);font-weight:600}.warn-text{color:var(--warn);font-weight:600}
.vega{width:100%;min-height:120px}.chart{min-width:0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
.diagnosis li{margin-bottom:4px}
.metrics th:first-child{width:24%}.metrics th:nth-child(3){width:18%}
.worst td{font-size:13px}.worst th:nth-child(3){width:30%}.worst th:last-child{width:22%}
.filters{display:flex;flex-wrap:wrap;gap:8px 18px;margin-bottom:10px;font-size:13px}
.filters .shown{color:var(--muted);align-self:center}
details.item{border:1px solid var(--line);border-radius:6px;margin-bottom:6px;padding:6px 10px}
details.item[open]{background:#fbfcfd}
details.item summary{cursor:pointer;overflow-wrap:anywhere}
details.item .type{color:var(--muted);font-size:12px;margin:0 6px}
.tag{display:inline-block;margin-left:6px;padding:0 7px;border-radius:9px;font-size:11px;font-weight:600;
background:#fee2e2;color:var(--fail)}.tag.low{background:#fef3c7;color:var(--warn)}
details.item h4{margin:12px 0 4px;font-size:13px;color:var(--muted);text-transform:uppercase}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:14px}.pair p{margin:0;overflow-wrap:anywhere}
.claims{padding-left:18px}.claim{margin-bottom:4px;overflow-wrap:anywhere}
.claim .verdict{font-weight:700;font-size:12px;padding:0 6px;border-radius:4px}
.claim.v-grounded .verdict{background:#d1fae5;color:var(--pass)}
.claim.v-out_of_context .verdict,.claim.v-inconsistency .verdict{background:#fef3c7;color:var(--warn)}
.claim.v-fabrication .verdict{background:#fee2e2;color:var(--fail)}
.contexts{padding-left:18px}.context{margin-bottom:8px}
.ctx{white-space:pre-wrap;max-height:12em;overflow:auto;font-size:12px;background:#f6f7f9;padding:6px;
border-radius:4px;overflow-wrap:anywhere}
.mark{font-size:11px;padding:0 6px;border-radius:4px;background:#eef0f3}.mark.yes{background:#d1fae5;color:var(--pass)}
.mark.no{background:#fee2e2;color:var(--fail)}
.item-metrics{display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;list-style:none;font-size:12px}
.item-metrics .low b{color:var(--fail)}.failure{color:var(--fail)}.muted{color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid var(--line);border-radius:6px;padding:10px 16px;min-width:130px}
.card .v{font-size:20px;font-weight:700}.card .k{color:var(--muted);font-size:12px}
.empty{color:var(--muted);font-style:italic;padding:12px;background:#f9fafb;border:1px dashed var(--line);
border-radius:6px;margin:0}
footer{color:var(--muted);font-size:12px;text-align:center;padding-bottom:24px}
"""


def render_parts(data: ReportData) -> Iterator[str]:
    """The report in parts, in page order: the per-item rows one by one, so a large evaluation's page is
    written out without ever being one string."""
    names = _metric_names(data)
    colors = colors_for(names)
    yield ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           '<meta name="viewport" content="width=device-width, initial-scale=1">'
           f"<title>{_e(data.title)}</title><style>{CSS}</style></head><body><main>")
    yield "\n".join([
        _header(data),
        _metrics_section(data, colors),
        _gates_section(data),
        _diagnosis_section(data),
        _per_type_section(data, names, colors),
        _distributions_section(data, colors),
        _trend_section(data, names, colors),
        _worst_section(data, names),
        _baseline_section(data),
    ]) + "\n"
    yield from _items_section(data, names)
    yield "\n" + _cost_section(data)
    yield (f"<footer>Generated {_e(data.generated_at)} by rag_assets · one self-contained file</footer>"
           "</main>" + vega_script() + FILTER_SCRIPT + "</body></html>\n")


def render_report(data: ReportData) -> str:
    """The whole report as one HTML document (inline CSS, chart specs and scripts; nothing loaded)."""
    return "".join(render_parts(data))


def write_report(data: ReportData, path: Path) -> Path:
    """Render and write atomically: a temporary file beside ``path``, then ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(render_parts(data))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a report is meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
