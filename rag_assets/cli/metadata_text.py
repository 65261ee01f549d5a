"""Asset metadata as plain terminal text: what ``rag-assets run`` prints of it (the summary table, ``--verbose``).

Metadata holds data: file names, questions, reviewers' cells. A terminal acts on the escape sequences such text may
hold (colours, cursor moves, a window title), so every character that is not printable is shown as its Python
escape (``\\x1b``), never sent as it is. Markdown (the tables, lists and reports made for the UI) is shown as its
lines, with the escapes ``escape_markdown`` put in for the UI taken off and nothing rendered; JSON (lists and
objects) one entry a line. A value longer than ``DETAIL_LINES`` lines shows its first ones and "... and N more",
and a line is cut at ``LINE_WIDTH`` characters: a table of every skipped file must not bury the rest.
"""

from __future__ import annotations

import json
import re

import dagster as dg

DETAIL_LINES = 10
LINE_WIDTH = 300
_TABLE_RULE = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+$")
_MARKDOWN_ESCAPE = re.compile(r"\\(.)")


def printable(text: str) -> str:
    """``text`` with every character a terminal would not print as itself (controls, format characters) escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def scalar_text(entry: dg.MetadataValue) -> str | None:
    """A number, flag, text or path as one plain line (integers with thousands separators); None for the rest."""
    value = entry.value
    if isinstance(entry, (dg.MarkdownMetadataValue, dg.JsonMetadataValue)) or not isinstance(value, (bool, int, float, str)):
        return None
    return printable(f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value))


def detail_lines(entry: dg.MetadataValue) -> list[str] | None:
    """A Markdown or JSON value as plain lines, at most ``DETAIL_LINES`` and a last "... and N more" (an empty list:
    a table with no rows, or nothing); None for a value :func:`scalar_text` shows, or one neither shows."""
    if isinstance(entry, dg.MarkdownMetadataValue):
        lines = _markdown_lines(entry.value or "")
    elif isinstance(entry, dg.JsonMetadataValue):
        lines = _json_lines(entry.value)
    else:
        return None
    shown = [_cut(printable(line)) for line in lines[:DETAIL_LINES]]
    return shown + ([f"... and {len(lines) - DETAIL_LINES:,} more"] if len(lines) > DETAIL_LINES else [])


def _markdown_lines(text: str) -> list[str]:
    """The non-blank lines; a table row without its outer pipes, its rule left out; a table with no row: none."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and _TABLE_RULE.match(lines[-1]):
        return []
    plain = []
    for line in lines:
        if _TABLE_RULE.match(line):
            continue
        if len(line) > 1 and line.startswith("|") and line.endswith("|"):
            line = line[1:-1].strip()
        plain.append(_MARKDOWN_ESCAPE.sub(r"\1", line))
    return plain


def _json_lines(value: object) -> list[str]:
    if isinstance(value, dict):
        return [f"{key}: {json.dumps(item, ensure_ascii=False, sort_keys=True)}" for key, item in value.items()]
    if isinstance(value, list):
        return [json.dumps(item, ensure_ascii=False, sort_keys=True) for item in value]
    return [json.dumps(value, ensure_ascii=False, sort_keys=True)]


def _cut(line: str) -> str:
    return line if len(line) <= LINE_WIDTH else f"{line[:LINE_WIDTH]}... ({len(line) - LINE_WIDTH:,} more characters)"
