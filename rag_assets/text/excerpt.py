"""How a problem message quotes a piece of data: enough to find it, never a file's worth of it."""

from __future__ import annotations


#: The most of one cell a problem message quotes: enough to find the cell, never a file's worth of data.
EXCERPT_CHARS = 40


def excerpt(text: str, quote: bool = True) -> str:
    """``text`` as a problem message quotes it (``repr`` unless ``quote`` is off), cut at ``EXCERPT_CHARS``
    with its length: an error report and UI metadata name the offending cell, they do not copy data."""
    if len(text) <= EXCERPT_CHARS:
        return repr(text) if quote else text
    shown = text[:EXCERPT_CHARS - 1] + "…"
    return f"{repr(shown) if quote else shown} ({len(text):,} characters)"
