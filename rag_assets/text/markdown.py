"""Markdown for Dagster metadata and reports (the UI renders it): text from data shown as text.

A question, an answer, a file name or a reviewer's cell may hold ``![x](http://host/pixel.png)``
(an image the UI would fetch), a link, raw HTML, or a ``|`` that would split a table cell. Every
piece of text that enters Markdown goes through :func:`escape_markdown`, which backslash-escapes
what starts an image, a link, an HTML tag or an autolink (and the backslash itself, so an escape
in the data cannot undo ours), and turns line breaks into spaces so data cannot start a block.
What is left renders as the characters the data holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# Links and images need [ and ], HTML and <autolinks> need <, table cells end at |.
_MARKUP = re.compile(r"[\\\[\]<|]")
# GFM turns bare http(s)://..., www.... and e-mail addresses into links: break the literal they need.
_AUTOLINK = re.compile(r"(?<=[A-Za-z]):(?=//)|(?<=\b[Ww][Ww][Ww])\.|(?<=[\w.+-])@(?=[\w-]+\.\w)")
_LINE_BREAK = re.compile(r"\r\n|[\r\n]")


def escape_markdown(value: object) -> str:
    """``value`` as text that renders literally on one line: no image, link, HTML or table cell of its own."""
    text = "" if value is None else str(value)
    text = _AUTOLINK.sub(lambda match: "\\" + match.group(0), _MARKUP.sub(lambda match: "\\" + match.group(0), text))
    return _LINE_BREAK.sub(" ", text)


def markdown_list(items: Iterable[object]) -> str:
    """A bullet list, one escaped item per line."""
    return "\n".join(f"- {escape_markdown(item)}" for item in items)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]], limit: int = 50) -> str:
    """A pipe table; past ``limit`` rows a last line says how many were left out."""
    lines = ["| " + " | ".join(map(escape_markdown, headers)) + " |", "|" + "---|" * len(headers)]
    extra = 0
    for index, row in enumerate(rows):
        if index < limit:
            lines.append("| " + " | ".join(map(escape_markdown, row)) + " |")
        else:
            extra += 1
    if extra:
        lines.append(f"\n_... and {extra:,} more rows_")
    return "\n".join(lines)
