"""Bulk inserts (executemany on SQLite, COPY on PostgreSQL) store exactly what the portable insert stores."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import insert, select

from rag_assets.corpus.manifest import scan
from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.reading import read_file
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.store.bulk import bulk_insert
from rag_assets.store.corpus_repository import SqlCorpusRepository
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


def test_a_snapshot_reads_back_exactly_the_chunks_it_cut(store_url: str, tmp_path: Path):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "escapes.md").write_text(
        "# Tabs\tand \\back\\slashes\n\n" + "\n\n".join(f"Line {i}:\tcol\\N \\t ünï ✓ end." * 12 for i in range(6)),
        encoding="utf-8")
    (root / "plain.txt").write_text("A plain paragraph.\n\nAnother one, with a \\ at the end \\\n", encoding="utf-8")
    config = ChunkerConfig(target_chars=300, overlap_chars=50, min_chars=80)
    repo = SqlCorpusRepository(get_engine(store_url))
    outcome = snapshot_corpus(root, config, repo)
    cut = [chunk for file in scan(root.resolve(), config).files for chunk in read_file(file, config, chunk=True).chunks]
    assert len(cut) == outcome.chunk_count > 2
    assert repo.chunks(outcome.version_id) == cut
