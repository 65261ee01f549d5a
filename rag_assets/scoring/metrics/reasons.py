"""Helpers for the reason texts experts read beside a judge's verdict."""

from __future__ import annotations

from collections.abc import Sequence


def quoted(texts: Sequence[str], limit: int = 3) -> str:
    """The first ``limit`` texts, and how many more there are."""
    shown = "; ".join(texts[:limit])
    return shown + (f" (+{len(texts) - limit} more)" if len(texts) > limit else "")
