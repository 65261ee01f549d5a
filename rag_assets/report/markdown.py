"""Markdown tables for Dagster metadata and reports (the UI renders them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]], limit: int = 50) -> str:
    """A pipe table; past ``limit`` rows a last line says how many were left out."""
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    extra = 0
    for index, row in enumerate(rows):
        if index < limit:
            lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
        else:
            extra += 1
    if extra:
        lines.append(f"\n_... and {extra:,} more rows_")
    return "\n".join(lines)
