"""A self-contained HTML evaluation report: one file with inline CSS, charts and scripts.

``render_report(ReportData) -> str`` builds the page; ``write_report`` writes it atomically, part by
part (``render_parts``). The page loads nothing (no fonts, CDNs or remote scripts): the charts are
Vega-Lite specs drawn by the vega bundle inlined from vl-convert-python (:mod:`rag_assets.report.charts`),
and every item can be expanded and filtered (:mod:`rag_assets.report.items`), so it opens offline and
can be attached to a ticket.

The markup is in Jinja2 templates (``templates/``, one partial per section under ``report.html``),
rendered with every value escaped (:mod:`rag_assets.report.templating`): questions and answers come
from users and LLMs, and are shown as text, never run. This module works out what each section shows
(which metrics, which chart specs, which columns); the templates only lay it out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.files import replaced_in_one_step
from rag_assets.report.charts import bar_chart, colors_for, histogram, trend_chart, vega_bundle
from rag_assets.report.compare import EvaluationDiff
from rag_assets.report.items import ItemDetail, item_filters, item_rows
from rag_assets.report.templating import defined, environment, status_class


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a set of items: ``passed`` is None when the metric has no threshold; ``label`` and
    ``definition`` are the registered metric's (empty for a name the registry does not know)."""

    name: str
    mean: float | None
    std: float | None = None
    n: int = 0
    failures: int = 0
    threshold: float | None = None
    passed: bool | None = None
    label: str = ""
    definition: str = ""


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
    history_note: str = ""  # what the trend leaves out and why (evaluations scored by another judge), "" if nothing
    worst_items: Sequence[Mapping[str, object]] = ()  # item_id, question_type, question, <metric>..., why
    diagnosis: Sequence[str] = ()
    gates: Sequence[Mapping[str, object]] = ()  # gate, status (passed/failed/warn), detail
    cost: Mapping[str, object] = field(default_factory=dict)
    items: Sequence[ItemDetail] = ()  # every item, worst first: the drill-down
    baseline: EvaluationDiff | None = None  # this evaluation (B) against its baseline (A)
    calibration: Mapping[str, str] = field(default_factory=dict)  # metric -> its judge's agreement with the experts
    probes: Mapping[str, str] = field(default_factory=dict)  # metric -> its judge probes' pass rates
    unreviewed: str = ""  # the banner's line when golden items were accepted without review (trial mode)

    @property
    def offline(self) -> bool:
        return "offline" in self.judge.lower()


def _metric_names(data: ReportData) -> list[str]:
    """Every metric name, in the order the overall table gives, then as first met elsewhere."""
    names: dict[str, None] = {m.name: None for m in data.metrics}
    for summaries in data.per_type.values():
        names.update({m.name: None for m in summaries})
    names.update({name: None for name in data.distributions})
    return list(names)


def _verdict(data: ReportData) -> list[tuple[str, str]]:
    """The header's one-line verdict as (class, text) parts: thresholds met, then gates."""
    judged = [m for m in data.metrics if m.passed is not None]
    parts = []
    if judged:
        ok = sum(m.passed for m in judged)
        parts.append(("pass" if ok == len(judged) else "fail", f"{ok} of {len(judged)} metrics meet their threshold"))
    statuses = [status_class(g.get("status", "")) for g in data.gates]
    if statuses:
        failed, warned = statuses.count("fail"), statuses.count("warn")
        parts.append(("fail" if failed else ("warn" if warned else "pass"),
                      f"{len(statuses) - failed - warned} of {len(statuses)} gates passed, {failed} failed, "
                      f"{warned} warned"))
    return parts


def _per_type(data: ReportData, names: Sequence[str], colors: Mapping[str, str]) -> dict | None:
    """The bars of every metric's mean per question type, and the table's rows (None where a type has
    no value for a metric)."""
    if not data.per_type:
        return None
    by_type = {t: {m.name: m for m in summaries} for t, summaries in data.per_type.items()}
    used = [n for n in names if any(n in metrics for metrics in by_type.values())]
    bars = [{"group": t, "metric": n, "value": metrics[n].mean} for t, metrics in by_type.items() for n in used
            if n in metrics and defined(metrics[n].mean)]
    return {"spec": bar_chart(bars, used, colors, title="Mean score by question type"), "metrics": used,
            "rows": [(t, [metrics.get(n) for n in used]) for t, metrics in by_type.items()]}


def _histograms(data: ReportData, colors: Mapping[str, str]) -> list[tuple[str, dict | None]]:
    """(metric, its histogram's spec) per distribution; None for a metric with no value to count."""
    thresholds = {m.name: m.threshold for m in data.metrics}
    charts = []
    for name, values in data.distributions.items():
        counted = [v for v in values if defined(v)]
        threshold = thresholds.get(name)
        charts.append((name, histogram(counted, colors[name], title=name,
                                       threshold=threshold if defined(threshold) else None) if counted else None))
    return charts


def _trend(data: ReportData, names: Sequence[str], colors: Mapping[str, str]) -> dict | None:
    """Every metric's mean over the evaluations so far, on a date axis; None without a dated value."""
    history = [row for row in data.history if row.get("created_at")]  # the axis is the evaluation date
    used = [n for n in names if any(defined(row.get(n)) for row in history)]
    if not history or not used:
        return None
    dated = [{**row, **{n: row.get(n) if defined(row.get(n)) else None for n in used}} for row in history]
    first, last = history[0]["created_at"], history[-1]["created_at"]
    return {"spec": trend_chart(dated, used, colors, title="Metric means over evaluations"),
            "note": " ".join(filter(None, (f"{len(history)} evaluations, oldest first, from {first} to {last}. Gaps "
                                           "are missing values.", data.history_note)))}


def _worst_metrics(data: ReportData, names: Sequence[str]) -> list[str]:
    """The worst-items table's metric columns: the report's metric order, then any other value."""
    keys: dict[str, None] = {}
    for row in data.worst_items:
        keys.update({k: None for k in row if k not in ("item_id", "question_type", "question", "why")})
    return [n for n in names if n in keys] + [k for k in keys if k not in names]


def render_parts(data: ReportData) -> Iterator[str]:
    """The report in parts, in page order: the per-item rows one by one, so a large evaluation's page is
    written out without ever being one string."""
    names = _metric_names(data)
    colors = colors_for(names)
    thresholds = {m.name: m.threshold for m in data.metrics}
    return environment().get_template("report.html").generate(
        data=data, colors=colors, verdict=_verdict(data), per_type=_per_type(data, names, colors),
        histograms=_histograms(data, colors), trend=_trend(data, names, colors),
        worst_metrics=_worst_metrics(data, names), item_filters=item_filters(data.items, names),
        item_rows=item_rows(data.items, thresholds), vega_bundle=vega_bundle())


def render_report(data: ReportData) -> str:
    """The whole report as one HTML document (inline CSS, chart specs and scripts; nothing loaded)."""
    return "".join(render_parts(data))


def write_report(data: ReportData, path: Path) -> Path:
    """Render and write in one step (``rag_assets.files.replaced_in_one_step``): a reader never sees half a page."""
    path = Path(path)
    with replaced_in_one_step(path) as handle:
        handle.writelines(render_parts(data))
    return path
