"""Bulk inserts of many plain rows inside an open transaction.

A snapshot of ten thousand files writes some 70,000 chunk rows. Through SQLAlchemy's compiled
``insert()`` every row pays parameter processing in Python (a third of a cold snapshot); the
driver's own paths cost a fraction of that: ``executemany`` with tuples on SQLite, ``COPY ...
FROM STDIN`` on PostgreSQL. Any other backend keeps the portable Core insert.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from sqlalchemy import Table, insert
from sqlalchemy.engine import Connection

from rag_assets.store.engine import batched

Row = Sequence[object]

# COPY's text format: a backslash starts an escape, tab separates columns, newline ends a row.
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_field(value: object) -> str:
    if value is None:
        return "\\N"
    return str(value).translate(_COPY_ESCAPES)


def _copy_text(rows: Iterable[Row]) -> str:
    return "".join("\t".join(map(_copy_field, row)) + "\n" for row in rows)


def bulk_insert(conn: Connection, table: Table, columns: Sequence[str], rows: Iterable[Row]) -> None:
    """Insert ``rows`` (tuples in the order of ``columns``) into ``table`` on ``conn``'s transaction."""
    dialect = conn.dialect.name
    names = ", ".join(columns)
    for batch in batched(rows):
        if dialect == "postgresql":
            with conn.connection.driver_connection.cursor() as cursor:
                cursor.copy_expert(f"COPY {table.name} ({names}) FROM STDIN", io.StringIO(_copy_text(batch)))
        elif dialect == "sqlite":
            marks = ", ".join("?" * len(columns))
            conn.exec_driver_sql(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", list(batch))
        else:
            conn.execute(insert(table), [dict(zip(columns, row)) for row in batch])
