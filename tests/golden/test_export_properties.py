"""Properties of the golden-set files: every export reads back through the project's own importers as the
items it was written from, no CSV cell a spreadsheet opens starts a formula, and any file at all is read
whole or rejected with one line naming the file and the line or row."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.corpus.models import ChunkRef
from rag_assets.evidence.spans import EvidenceSpan
from rag_assets.golden.export import read_golden_records, write_golden
from rag_assets.golden.importers import ExternalDataError, read_ragas_testset, write_ragas_testset
from rag_assets.golden.models import ExternalItem, GoldenItem
from rag_assets.text.spreadsheet import formula_start

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HOSTILE = ["=1+1", "@SUM(1+1)*cmd|' /C calc'!A0", "-2+3", "+1", "\t=x", "\r@x", "  =1+1", "'=x", "''-x", "'x",
           'say "hi", then; go', "a\r\nb", "line\u2028sep", "ünïcode “ok”", "[1, 2]"]
# text as it reaches a golden set: any character but the C0 controls every boundary rejects (rag_assets.text.control)
plain = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=[
    chr(c) for c in (*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20))]), max_size=16)
texts = st.one_of(plain, st.sampled_from(HOSTILE))
nonblank = texts.filter(lambda text: text.strip())
ids = st.one_of(st.from_regex(r"[a-z0-9:._-]{1,12}", fullmatch=True), st.sampled_from(["=id", "@id", "-id", "+1"]))


@st.composite
def golden_items(draw) -> list[GoldenItem]:
    refs = st.lists(st.builds(ChunkRef, texts, texts), max_size=3).map(tuple)
    spans = st.lists(st.builds(EvidenceSpan, texts, texts, st.integers(0, 10**6), st.integers(0, 10**6), texts,
                               st.sampled_from([1.0, 2.0, 0.5])), max_size=2).map(tuple)
    return draw(st.lists(st.builds(GoldenItem, ids, st.integers(1, 10**6), texts, texts, texts, refs, texts, nonblank,
                                   evidence=spans), max_size=4))


@st.composite
def ragas_rows(draw) -> list[dict]:
    chosen = draw(st.lists(ids, unique=True, max_size=4))
    return [{"item_id": item_id, "question": draw(nonblank), "reference_answer": draw(nonblank),
             "question_type": draw(st.sampled_from(["factual", "multi_hop", "abstractive", "=type"])),
             "relevant_chunk_ids": draw(st.lists(texts, max_size=3)),
             "reference_contexts": draw(st.lists(nonblank, max_size=3))} for item_id in chosen]


def _cells(path: Path) -> list[str]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [cell for row in csv.reader(handle) for cell in row]


@SETTINGS
@given(items=golden_items(), kind=st.sampled_from(["csv", "jsonl"]))
def test_every_golden_export_reads_back_as_its_items(tmp_path: Path, items: list[GoldenItem], kind: str):
    path = write_golden(items, tmp_path / f"golden.{kind}", kind, {})
    assert read_golden_records(path) == items
    if kind == "csv":
        assert [cell for cell in _cells(path) if formula_start(cell)] == []


@SETTINGS
@given(rows=ragas_rows(), suffix=st.sampled_from([".csv", ".jsonl"]))
def test_every_ragas_export_reads_back_as_its_rows(tmp_path: Path, rows: list[dict], suffix: str):
    path = tmp_path / f"testset{suffix}"
    write_ragas_testset(rows, path)
    assert read_ragas_testset(path) == [
        ExternalItem(external_id=r["item_id"], question=r["question"], reference_answer=r["reference_answer"],
                     question_type=r["question_type"], relevant_texts=tuple(r["reference_contexts"]),
                     external_chunk_ids=tuple(r["relevant_chunk_ids"])) for r in rows]
    if suffix == ".csv":
        assert [cell for cell in _cells(path) if formula_start(cell)] == []


csv_text = st.lists(st.lists(st.one_of(texts, st.sampled_from(['"', '""', ",", "\n", "{}", '[{"chunk_id": 1}]', "7"])),
                             max_size=9).map(",".join), max_size=5).map("\n".join)
json_text = st.lists(st.one_of(texts, st.sampled_from(
    ['{"item_id": "q", "revision": 1e400}', "null", "[]", '{"relevant_chunks": "x"}', '{"user_input": "q?"}',
     '{"user_input": "q?", "reference": "a", "reference_contexts": "{[]: 1}"}'])), max_size=5).map("\n".join)
HEADERS = ["", "item_id,revision,question_type,question,reference_answer,corpus_version,origin,relevant_chunks\n",
           "user_input,reference_contexts,reference,synthesizer_name\n"]


@pytest.mark.parametrize("reader", [read_golden_records, read_ragas_testset], ids=["golden", "ragas"])
@SETTINGS
@given(data=st.data())
def test_any_file_is_read_whole_or_rejected_in_one_line_naming_the_line_or_row(tmp_path: Path, reader, data):
    suffix = data.draw(st.sampled_from([".csv", ".jsonl"]))
    text = data.draw(st.sampled_from(HEADERS) if suffix == ".csv" else st.just("")) + data.draw(
        csv_text if suffix == ".csv" else json_text)
    path = tmp_path / f"file{suffix}"
    path.write_text(text, encoding="utf-8", newline="")
    try:
        items = reader(path)
    except ExternalDataError as error:
        message = str(error)
        assert "\n" not in message and message.startswith(f"{path}: ")
        assert re.match(rf"{re.escape(str(path))}: (row|line) \d+", message), message
    else:
        assert isinstance(items, list)
