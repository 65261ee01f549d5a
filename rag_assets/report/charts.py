"""The report's charts as Vega-Lite specs (plain dicts), and the JavaScript that draws them offline.

Each chart is a spec the page embeds as JSON (the ``chart`` macro of ``templates/macros.html``);
:func:`vega_bundle` is the vega, vega-lite and vega-embed JavaScript that vl-convert-python ships (no
network at build or view time), inlined once per page, and ``templates/draw_charts.js`` draws the
specs with it. Every metric keeps one colour across all charts (20 distinct colours, then they repeat).

The specs are written out as dicts, not built with altair: altair validates every inline data row
against the Vega-Lite JSON schema as the chart object is made (a 90 MB peak for one histogram of
10,000 items) and its import alone costs 40 MB. The dicts are what altair 6.3's ``to_dict()`` gave
for the same charts (its default view config included), so the page draws the same.

Metric values lie in [0, 1] (every score of this project does): axes use that domain and clip to it.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path

from rag_assets.settings import user_cache_dir

__all__ = ["PALETTE", "bar_chart", "colors_for", "histogram", "trend_chart", "vega_bundle"]

# Tableau 20: 20 colours a reader can tell apart, the dark of each pair first.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
           "#dbdb8d", "#9edae5")
WIDTH = "container"
# The Vega-Lite version of vl-convert-python's bundle (its newest), which vega-embed checks the spec against.
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
UNIT = {"domain": [0, 1], "clamp": True}
BINS = {"extent": [0, 1], "step": 0.1}


def colors_for(names: Sequence[str]) -> dict[str, str]:
    """One stable colour per metric name, in the given order."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def _top_level(**spec: object) -> dict:
    """A whole chart: the schema it is written against and the default view size of a fixed-size chart."""
    return {"$schema": SCHEMA, "config": {"view": {"continuousWidth": 300, "continuousHeight": 300}}, **spec}


def _field(name: str, kind: str, **extra: object) -> dict:
    return {"field": name, "type": kind, **extra}


def _metric_color(colors: Mapping[str, str], names: Sequence[str]) -> dict:
    return _field("metric", "nominal", scale={"domain": list(names), "range": [colors[n] for n in names]},
                  legend={"orient": "top", "columns": 4})


def bar_chart(rows: Sequence[Mapping[str, object]], names: Sequence[str], colors: Mapping[str, str],
              *, title: str) -> dict:
    """Grouped bars: ``rows`` are {"group", "metric", "value"}; one group per question type."""
    return _top_level(data={"values": [dict(row) for row in rows]}, title=title, width=WIDTH, height=260,
                      mark={"type": "bar"}, encoding={
        "x": _field("group", "nominal", title=None, axis={"labelAngle": -30, "labelLimit": 140}),
        "xOffset": _field("metric", "nominal", sort=list(names)),
        "y": _field("value", "quantitative", title="mean", scale=UNIT),
        "color": _metric_color(colors, names),
        "tooltip": [_field("group", "nominal"), _field("metric", "nominal"),
                    _field("value", "quantitative", format=".3f")],
    })


def histogram(values: Sequence[float], color: str, *, title: str, threshold: float | None = None) -> dict:
    """Counts of ``values`` in 10 bins on [0, 1], with the threshold as a dashed rule."""
    data = {"values": [{"value": min(1.0, max(0.0, float(v)))} for v in values]}
    mean = sum(float(v) for v in values) / len(values)
    count = {"aggregate": "count", "type": "quantitative"}
    bars = {"mark": {"type": "bar", "color": color}, "encoding": {
        "x": _field("value", "quantitative", bin=BINS, title=f"n = {len(values)} · mean {mean:.3f}"),
        "y": {**count, "title": "items"},
        "tooltip": [_field("value", "quantitative", bin=BINS), count],
    }}
    if threshold is None:  # one layer: its data is the whole chart's
        return _top_level(data=data, layer=[bars], title=title, width=WIDTH, height=150)
    rule = {"data": {"values": [{"threshold": threshold}]},
            "mark": {"type": "rule", "color": "#b91c1c", "strokeDash": [4, 3]},
            "encoding": {"x": _field("threshold", "quantitative")}}
    return _top_level(layer=[{"data": data, **bars}, rule], title=title, width=WIDTH, height=150)


def _iso(value: object) -> str:
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value)


def trend_chart(history: Sequence[Mapping[str, object]], names: Sequence[str], colors: Mapping[str, str],
                *, title: str) -> dict:
    """One line per metric over the evaluations' dates; a missing value breaks its line."""
    rows = [{"date": _iso(row["created_at"]), "evaluation": str(row.get("label", "")), "metric": name,
             "value": row.get(name)} for row in history for name in names]
    return _top_level(data={"values": rows}, title=title, width=WIDTH, height=260,
                      mark={"type": "line", "point": True}, encoding={
        "x": _field("date", "temporal", title="evaluated at", axis={"format": "%Y-%m-%d", "labelAngle": -30}),
        "y": _field("value", "quantitative", title="mean", scale=UNIT),
        "color": _metric_color(colors, names),
        "tooltip": [_field("evaluation", "nominal"), _field("date", "temporal", format="%Y-%m-%d %H:%M"),
                    _field("metric", "nominal"), _field("value", "quantitative", format=".3f")],
    })


# Run in a child process: the bundler starts a JavaScript runtime that would stay in this process
# (about 130 MB of RSS) for its whole life, long after the one string it returns.
BUNDLE_SCRIPT = "import sys, vl_convert; sys.stdout.buffer.write(vl_convert.javascript_bundle().encode('utf-8'))"
#: text every bundle holds (what the page calls): a cached file without it is not one, and is made again
BUNDLE_MARK = "vegaEmbed"


def bundle_cache() -> Path:
    """Where the bundle of the installed vl-convert-python is kept between processes: the user's cache folder
    (``XDG_CACHE_HOME``, else ``~/.cache``), named by that version, so an upgrade makes it again."""
    return user_cache_dir() / "rag_assets" / f"vega-bundle-{version('vl-convert-python')}.js"


def _keep(path: Path, bundle: str) -> None:
    """Write the bundle whole or not at all (a concurrent reader never sees half of it); a folder that cannot be
    written only means the next process makes it again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(bundle, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """vega, vega-lite and vega-embed as one script, every ``</script`` in it escaped so the page can
    inline it in a script element. Making it costs about 1.3 CPU-s (a JavaScript runtime in a child process), which
    every process that writes a report paid (each evaluation step, each ``rag-assets run``); it is the same for one
    version of vl-convert-python, so it is kept in :func:`bundle_cache`."""
    path = bundle_cache()
    try:
        kept = path.read_text(encoding="utf-8")
        if BUNDLE_MARK in kept:
            return kept
    except (OSError, UnicodeDecodeError):
        pass
    bundle = subprocess.run([sys.executable, "-c", BUNDLE_SCRIPT], capture_output=True, check=True).stdout
    made = bundle.decode("utf-8").replace("</script", "<\\/script")
    _keep(path, made)
    return made
