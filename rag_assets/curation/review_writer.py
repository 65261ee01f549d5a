"""Write the review outbox: one CSV for spreadsheets and one JSONL for tools, with the same rows.

The CSV is what experts open in Excel / LibreOffice / Numbers: UTF-8 with a BOM (so Excel picks
the right encoding), comma-separated, minimal quoting, CRLF line ends, and every cell that a
spreadsheet would run as a formula neutralised with a leading apostrophe (CSV injection, see
:mod:`rag_assets.text.spreadsheet`). The reader (:mod:`rag_assets.curation.review_file`) strips
exactly that apostrophe again, so text round-trips unchanged. The JSONL copy is never opened by a
spreadsheet and is not neutralised.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from rag_assets.curation.models import OUTBOX_COLUMNS, ROWS_WRITTEN
from rag_assets.text.spreadsheet import write_spreadsheet_csv

__all__ = ["write_atomically", "write_review_files"]

def _cells(row: Mapping[str, str | None], number: int) -> list[str]:
    unknown = sorted(set(row) - set(OUTBOX_COLUMNS))
    if unknown:
        raise ValueError(f"outbox row {number} has unknown column(s): {', '.join(unknown)}")
    values = []
    for column in OUTBOX_COLUMNS:
        value = row.get(column)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"outbox row {number}, {column}: expected a string, got {type(value).__name__}")
        values.append(value or "")
    return values


def write_atomically(path: Path, encoding: str, write: Callable[[IO[str]], None]) -> None:
    """Write into a temporary file next to ``path`` and move it into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding=encoding, newline="", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        # NamedTemporaryFile creates 0600; keep the mode of the file being replaced, else 0644.
        os.chmod(handle.name, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def write_review_files(rows: Sequence[Mapping[str, str | None]], csv_path: Path, jsonl_path: Path) -> None:
    """Write ``rows`` (dicts keyed by OUTBOX_COLUMNS; a missing key or None is an empty cell) to
    ``csv_path`` and ``jsonl_path``. Each file is replaced atomically. Every row carries the row
    count in ``rows_written``, so the reader can tell a file that lost rows."""
    count = str(len(rows))
    table = [_cells({**row, ROWS_WRITTEN: count}, number) for number, row in enumerate(rows, start=1)]

    def write_csv(handle: IO[str]) -> None:
        write_spreadsheet_csv(handle, OUTBOX_COLUMNS, table, lineterminator="\r\n")

    def write_jsonl(handle: IO[str]) -> None:
        for cells in table:
            handle.write(json.dumps(dict(zip(OUTBOX_COLUMNS, cells)), ensure_ascii=False) + "\n")

    write_atomically(Path(csv_path), "utf-8-sig", write_csv)
    write_atomically(Path(jsonl_path), "utf-8", write_jsonl)
