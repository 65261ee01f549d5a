"""The Jinja2 environment the HTML report is rendered with, and the filters its templates format with.

Every value a template prints is escaped (``autoescape=True``): questions, answers and contexts come
from users and LLMs, so no text of theirs may become markup, and the templates never need to remember
to escape. A name a template misspells fails the render (``StrictUndefined``) instead of leaving a
blank cell. The templates are package data (``rag_assets/report/templates``), read through the
package, so an installed wheel renders the same page as a checkout; they never change while the
process runs, so they are not checked for changes on every include (a report includes the item
partial once per item).
"""

from __future__ import annotations

import functools
import math

from jinja2 import Environment, PackageLoader, StrictUndefined

__all__ = ["defined", "environment", "num", "percent", "status_class", "value"]

STATUS_CLASSES = {"passed": "pass", "pass": "pass", "failed": "fail", "fail": "fail", "warn": "warn",
                  "warning": "warn"}


def defined(value: object) -> bool:
    """A number that can be shown: not None, not a bool, not NaN or infinite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def num(value: object, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if defined(value) else "—"


def value(value: object, key: str = "") -> str:
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


def percent(value: float) -> str:
    """A share in [0, 1] as a CSS length (clipped: a meter never overflows its bar)."""
    return f"{min(1.0, max(0.0, float(value))) * 100:.1f}%"


def status_class(status: object) -> str:
    """The badge class of a gate status: pass, fail, warn, or none for anything else."""
    return STATUS_CLASSES.get(str(status).lower(), "none")


@functools.lru_cache(maxsize=1)
def environment() -> Environment:
    """The report's one environment: templates compile once per process. Block tags leave no blank
    lines behind (``trim_blocks``, ``lstrip_blocks``); each partial ends its line."""
    env = Environment(loader=PackageLoader("rag_assets.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, auto_reload=False, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters.update(num=num, value=value, percent=percent, status_class=status_class)
    env.tests["defined_number"] = defined
    # ``tojson`` (chart specs): keys sorted as before, non-ASCII text kept as it is; it escapes < > & '
    # so no text inside a spec can close its script element.
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
    return env
