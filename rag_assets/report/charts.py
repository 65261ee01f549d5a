"""The report's charts as Vega-Lite specs built with altair, and the JavaScript that draws them offline.

Each chart is a spec (a dict) embedded in the page as JSON; :func:`vega_script` is the vega, vega-lite
and vega-embed bundle that vl-convert-python ships (no network at build or view time), inlined once
per page. Every metric keeps one colour across all charts (20 distinct colours, then they repeat).

Metric values lie in [0, 1] (every score of this project does): axes use that domain and clip to it.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence

import altair as alt

__all__ = ["PALETTE", "bar_chart", "colors_for", "embed", "histogram", "trend_chart", "vega_script"]

# Tableau 20: 20 colours a reader can tell apart, the dark of each pair first.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
           "#dbdb8d", "#9edae5")
WIDTH = "container"


def colors_for(names: Sequence[str]) -> dict[str, str]:
    """One stable colour per metric name, in the given order."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def _scale(colors: Mapping[str, str], names: Sequence[str]) -> alt.Scale:
    return alt.Scale(domain=list(names), range=[colors[n] for n in names])


def _unit() -> alt.Scale:
    return alt.Scale(domain=[0, 1], clamp=True)


def bar_chart(rows: Sequence[Mapping[str, object]], names: Sequence[str], colors: Mapping[str, str],
              *, title: str) -> dict:
    """Grouped bars: ``rows`` are {"group", "metric", "value"}; one group per question type."""
    chart = alt.Chart(alt.Data(values=list(rows)), title=title, width=WIDTH, height=260).mark_bar().encode(
        x=alt.X("group:N", title=None, axis=alt.Axis(labelAngle=-30, labelLimit=140)),
        xOffset=alt.XOffset("metric:N", sort=list(names)),
        y=alt.Y("value:Q", title="mean", scale=_unit()),
        color=alt.Color("metric:N", scale=_scale(colors, names), legend=alt.Legend(orient="top", columns=4)),
        tooltip=["group:N", "metric:N", alt.Tooltip("value:Q", format=".3f")],
    )
    return chart.to_dict()


def histogram(values: Sequence[float], color: str, *, title: str, threshold: float | None = None) -> dict:
    """Counts of ``values`` in 10 bins on [0, 1], with the threshold as a dashed rule."""
    data = alt.Data(values=[{"value": min(1.0, max(0.0, float(v)))} for v in values])
    mean = sum(float(v) for v in values) / len(values)
    bars = alt.Chart(data).mark_bar(color=color).encode(
        x=alt.X("value:Q", bin=alt.Bin(extent=[0, 1], step=0.1), title=f"n = {len(values)} · mean {mean:.3f}"),
        y=alt.Y("count():Q", title="items"),
        tooltip=[alt.Tooltip("value:Q", bin=alt.Bin(extent=[0, 1], step=0.1)), "count():Q"],
    )
    layers = [bars]
    if threshold is not None:
        layers.append(alt.Chart(alt.Data(values=[{"threshold": threshold}])).mark_rule(
            color="#b91c1c", strokeDash=[4, 3]).encode(x="threshold:Q"))
    return alt.layer(*layers, title=title, width=WIDTH, height=150).to_dict()


def _iso(value: object) -> str:
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value)


def trend_chart(history: Sequence[Mapping[str, object]], names: Sequence[str], colors: Mapping[str, str],
                *, title: str) -> dict:
    """One line per metric over the evaluations' dates; a missing value breaks its line."""
    rows = [{"date": _iso(row["created_at"]), "evaluation": str(row.get("label", "")), "metric": name,
             "value": row.get(name)} for row in history for name in names]
    chart = alt.Chart(alt.Data(values=rows), title=title, width=WIDTH, height=260).mark_line(point=True).encode(
        x=alt.X("date:T", title="evaluated at", axis=alt.Axis(format="%Y-%m-%d", labelAngle=-30)),
        y=alt.Y("value:Q", title="mean", scale=_unit()),
        color=alt.Color("metric:N", scale=_scale(colors, names), legend=alt.Legend(orient="top", columns=4)),
        tooltip=["evaluation:N", alt.Tooltip("date:T", format="%Y-%m-%d %H:%M"), "metric:N",
                 alt.Tooltip("value:Q", format=".3f")],
    )
    return chart.to_dict()


def embed(spec: dict, chart_id: str) -> str:
    """A placeholder the page script fills, with the spec as JSON no text inside can close."""
    data = json.dumps(spec, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c")
    return (f'<div class="vega" id="{chart_id}"></div>'
            f'<script type="application/json" data-chart="{chart_id}">{data}</script>')


# Run in a child process: the bundler starts a JavaScript runtime that would stay in this process
# (about 130 MB of RSS) for its whole life, long after the one string it returns.
BUNDLE_SCRIPT = "import sys, vl_convert; sys.stdout.buffer.write(vl_convert.javascript_bundle().encode('utf-8'))"


@functools.lru_cache(maxsize=1)
def _bundle() -> str:
    bundle = subprocess.run([sys.executable, "-c", BUNDLE_SCRIPT], capture_output=True, check=True).stdout
    return bundle.decode("utf-8").replace("</script", "<\\/script")


def vega_script() -> str:
    """The inline scripts that draw every embedded chart as SVG, with nothing loaded from anywhere
    (``window.reportCharts`` settles when all are drawn)."""
    draw = ("window.reportCharts=Promise.all(Array.from(document.querySelectorAll('script[data-chart]'),function(s){"
            "return vegaEmbed('#'+s.dataset.chart,JSON.parse(s.textContent),{renderer:'svg',actions:false})"
            ".catch(function(e){document.getElementById(s.dataset.chart).textContent='chart failed: '+e;});}));")
    return f"<script>{_bundle()}</script><script>{draw}</script>"
