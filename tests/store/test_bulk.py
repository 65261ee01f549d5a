"""Bulk inserts (executemany on SQLite, COPY on PostgreSQL) store exactly what the portable insert stores."""

from __future__ import annotations

from sqlalchemy import insert, select

from rag_assets.store.bulk import bulk_insert
from rag_assets.store.engine import get_engine, write_transaction
from rag_assets.store.tables import FileStatRow

FILE_STAT = FileStatRow.__table__
COLUMNS = ("corpus_root", "path", "size", "mtime_ns", "content_hash", "skip_reason")
AWKWARD = [
    ("core", "tab\there.md", 0, 0, "h0", None),
    ("core", "back\\slash\\N.md", 2**40, -1, "h1", "\\N"),
    ("core", "new\nline\r\n.md", 7, 1_733_000_000_123_456_789, "h2", "ends with a backslash \\"),
    ("core", "ünï cødé ✓.md", 5_000_000, 3, "h3", ""),
]


def _rows(conn, root: str) -> list[tuple]:
    query = select(*(FILE_STAT.c[name] for name in COLUMNS[1:])).where(FILE_STAT.c.corpus_root == root)
    return sorted(tuple(row) for row in conn.execute(query))


def test_bulk_insert_round_trips_the_rows_the_core_insert_stores(store_url: str):
    engine = get_engine(store_url)
    bulk = [("bulk", *row[1:]) for row in AWKWARD]
    with write_transaction(engine) as conn:
        conn.execute(insert(FILE_STAT), [dict(zip(COLUMNS, row)) for row in AWKWARD])
        bulk_insert(conn, FILE_STAT, COLUMNS, bulk)
    with engine.connect() as conn:
        assert _rows(conn, "bulk") == _rows(conn, "core") == sorted(row[1:] for row in AWKWARD)


def test_bulk_insert_spans_batches_and_is_part_of_the_transaction(store_url: str):
    engine = get_engine(store_url)
    many = [("many", f"doc{i:05}.md", i, i, f"h{i}", None) for i in range(12_001)]
    try:
        with write_transaction(engine) as conn:
            bulk_insert(conn, FILE_STAT, COLUMNS, many)
            raise RuntimeError("abort after the insert")
    except RuntimeError:
        pass
    with engine.connect() as conn:
        assert _rows(conn, "many") == [], "a failed transaction leaves no bulk-inserted row behind"
    with write_transaction(engine) as conn:
        bulk_insert(conn, FILE_STAT, COLUMNS, iter(many))
    with engine.connect() as conn:
        assert _rows(conn, "many") == [row[1:] for row in many]
