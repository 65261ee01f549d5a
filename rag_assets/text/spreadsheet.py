"""The one rule for text a spreadsheet may run as a formula (CSV injection), for every file a person opens.

OWASP's rule: a cell that starts with ``=``, ``+``, ``-``, ``@``, tab or carriage return, also after
leading whitespace (Excel skips the spaces and still runs ``  =1+1``), is a formula. Every writer of
such a file (the review CSV and workbook, the judge review, the golden-set and ragas CSV exports)
passes its text cells through :func:`neutralise`, which prefixes one apostrophe; every reader of those
files passes them through :func:`restore`, which strips exactly that apostrophe, so each cell reads
back as it was written. A cell that already starts with apostrophes before a formula character gets
one more, which is what keeps the pair exact (``'=x`` -> ``''=x`` -> ``'=x``; ``'x`` is left alone
both ways). JSONL and parquet are for tools, never opened in a spreadsheet, and stay literal.

A reader of a CSV a person may have filled (a review, a judge review, a ragas test set) refuses a cell that
still starts like a formula once the writer's apostrophe is accounted for (:func:`formula_cell`), in the
words of :func:`formula_message`, rather than guess what the person meant.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from typing import IO, Any

__all__ = ["FORMULA_TRIGGERS", "formula_cell", "formula_message", "formula_start", "neutralise", "restore",
           "write_spreadsheet_csv"]

# A cell starting with one of these is run as a formula (or, for TAB / CR, can be turned into one).
FORMULA_TRIGGERS: frozenset[str] = frozenset({"=", "+", "-", "@", "\t", "\r"})
# A number such as ``-3.5`` starts with a formula character but a spreadsheet shows it as the number it is.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def formula_start(text: str) -> str | None:
    """The formula character ``text`` starts with, first or after leading whitespace, else None."""
    for character in (text[:1], text.lstrip()[:1]):
        if character in FORMULA_TRIGGERS:
            return character
    return None


def neutralise(cell: str) -> str:
    """``cell`` with one apostrophe before it when a spreadsheet would treat it as a formula."""
    return "'" + cell if formula_start(cell.lstrip("'")) else cell


def restore(cell: str) -> str:
    """The text :func:`neutralise` was given: one leading apostrophe before (more apostrophes and) a
    formula start is the writer's and is stripped; anything else is returned as it is."""
    return cell[1:] if cell[:1] == "'" and formula_start(cell.lstrip("'")) else cell


def formula_cell(raw: str) -> str | None:
    """The formula character a CSV cell as read (``raw``, before :func:`restore`) starts with, else None: None
    too when the writer's apostrophe escapes it, and for a plain number such as ``-3.5``."""
    if restore(raw) != raw or _PLAIN_NUMBER.fullmatch(raw.strip()):
        return None
    return formula_start(raw)


def formula_message(character: str) -> str:
    """What a reader says of a cell starting with the formula ``character``, and how to keep such text."""
    return f"starts with {character!r} (a spreadsheet formula); remove it or prefix it with an apostrophe"


def write_spreadsheet_csv(handle: IO[str], header: Sequence[str], rows: Iterable[Sequence[Any]],
                          **dialect: Any) -> None:
    """The header and ``rows`` as CSV on ``handle`` (``dialect``: options of :func:`csv.writer`), every
    cell as text through :func:`neutralise`: the one way the project writes a CSV a person opens."""
    writer = csv.writer(handle, **dialect)
    writer.writerow(header)
    writer.writerows([neutralise(str(cell)) for cell in row] for row in rows)
