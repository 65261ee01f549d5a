"""The exports a person opens in a spreadsheet (our golden-set CSV, the ragas CSV) never hold a cell a
spreadsheet runs as a formula, and the project's own importers read every cell back as it was."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkRef
from rag_assets.golden.export import write_golden
from rag_assets.golden.importers import read_ragas_testset
from rag_assets.golden.models import GoldenItem
from rag_assets.golden.sources import read_golden

PAYLOAD = "@SUM(1+1)*cmd|' /C calc'!A0"
ITEMS = [
    GoldenItem("=HYPERLINK(\"http://x\")", 1, "factual", PAYLOAD, "  =1+1", (ChunkRef("c1", "h1"),), "cv-1",
               "generated"),
    GoldenItem("q-2", 1, "factual", "-2+3+cmd|' /C calc'!A0", "\t+1", (ChunkRef("c2", "h2"),), "cv-1", "generated"),
    GoldenItem("q-3", 1, "factual", "'=already quoted", "\r@x", (ChunkRef("c2", "h2"),), "cv-1", "generated"),
]
TEXTS = {"c1": "=1+1 in a context", "c2": "plain"}


def _cells(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize("kind", ["csv", "ragas"])
def test_a_csv_export_neutralises_every_formula_cell(tmp_path: Path, kind: str):
    path = write_golden(ITEMS, tmp_path / ("golden.csv" if kind == "csv" else "golden.ragas.csv"), kind, TEXTS)
    cells = [cell for row in _cells(path) for cell in row]
    assert "'" + PAYLOAD in cells and PAYLOAD not in cells
    assert "'  =1+1" in cells and "'\t+1" in cells and "''=already quoted" in cells and "'\r@x" in cells
    assert not [cell for cell in cells if cell[:1] in "=+-@\t\r" or cell.lstrip()[:1] in "=+-@"], cells


def test_the_golden_csv_export_reads_back_to_the_same_items(tmp_path: Path):
    assert read_golden(write_golden(ITEMS, tmp_path / "golden.csv", "csv", TEXTS)) == ITEMS


def test_the_ragas_csv_export_reads_back_to_the_same_texts(tmp_path: Path):
    items = read_ragas_testset(write_golden(ITEMS, tmp_path / "golden.ragas.csv", "ragas", TEXTS))
    assert [(i.external_id, i.question, i.reference_answer, i.relevant_texts) for i in items] == [
        (g.item_id, g.question, g.reference_answer, tuple(TEXTS[r.chunk_id] for r in g.relevant_chunks)) for g in ITEMS]

