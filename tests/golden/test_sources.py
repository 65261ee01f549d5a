"""Golden sets for rag_assets.evaluate: pinned to a corpus or to their own contexts; bad input named."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rag_assets.corpus.models import ChunkerConfig, ChunkRef, sha256_hex
from rag_assets.corpus.snapshot import read_chunks
from rag_assets.evidence.spans import EvidenceSpan
from rag_assets.golden.export import FORMATS, write_golden
from rag_assets.golden.importers import ExternalDataError
from rag_assets.golden.models import GoldenItem
from rag_assets.golden.sources import CONTEXTS_VERSION, golden_source, read_golden
from tests.conftest import SAMPLE_CORPUS

EXPORT_LINE = ('{"item_id": "q-1", "revision": 2, "question_type": "factual", "question": "q?", "reference_answer": "a", '
               '"corpus_version": "cv-1", "origin": "generated", "relevant_chunks": [{"chunk_id": "%s", '
               '"content_hash": "h"}]}\n')


def test_contexts_become_the_chunks_once_each_under_the_files_ids_and_items_point_at_them():
    frame = pd.DataFrame({"user_input": ["a?", "b?"], "reference": ["A.", "B."],
                          "reference_contexts": [["alpha text", "shared text"], ["shared text"]],
                          "relevant_chunk_ids": [["c-a", "c-s"], ["c-s"]]})
    source = golden_source(frame)
    assert [(c.chunk_id, c.text) for c in source.chunks] == [("c-a", "alpha text"), ("c-s", "shared text")]
    assert [[r.chunk_id for r in i.relevant_chunks] for i in source.items] == [["c-a", "c-s"], ["c-s"]]
    assert source.corpus_version.startswith(f"{CONTEXTS_VERSION}-") and source.corpus_root is None


def test_a_dataframe_row_without_a_reference_is_named():
    frame = pd.DataFrame({"question": ["a?", "b?"], "ground_truth": ["A.", None], "reference_contexts": [["x"], ["y"]]})
    with pytest.raises(ExternalDataError, match=r"^DataFrame: row 2: field 'reference' is missing or empty$"):
        golden_source(frame)


def test_a_context_found_in_no_document_of_the_corpus_stops_the_evaluation_naming_the_item_and_field():
    frame = pd.DataFrame({"item_id": ["lost"], "user_input": ["a?"], "reference": ["A."],
                          "reference_contexts": [["words that appear in no document of the sample corpus at all"]]})
    with pytest.raises(ExternalDataError, match=(
            r"^1 item cannot be pinned to the corpus at .*corpus: lost: row 1: reference_contexts\[0\] is not "
            r"in any document \('words that appear in no document of the sample corpus at all'\)$")):
        golden_source(frame, SAMPLE_CORPUS)


def test_a_reference_context_straddling_two_of_our_chunks_becomes_one_evidence_span_of_its_document():
    _, chunks, bodies = read_chunks(SAMPLE_CORPUS, ChunkerConfig())
    first, second = next((a, b) for a, b in zip(chunks, chunks[1:]) if a.path == b.path and b.start > a.start + 200)
    body = bodies[first.path]
    start, end = (first.start + first.end) // 2, (second.start + second.end) // 2
    label = body[start:end]
    source = golden_source(pd.DataFrame({"user_input": ["q?"], "reference": ["A."], "reference_contexts": [[label]]}),
                           SAMPLE_CORPUS)
    (item,) = source.items
    assert item.evidence == (EvidenceSpan(first.path, sha256_hex(body), start, end, sha256_hex(label)),)
    assert {r.chunk_id for r in item.relevant_chunks} <= {first.chunk_id, second.chunk_id}


def test_an_export_line_with_a_missing_field_or_a_chunk_the_corpus_lacks_is_named(tmp_path: Path):
    export = tmp_path / "golden-v1.jsonl"
    export.write_text(EXPORT_LINE % "c1" + '{"item_id": "q-2", "relevant_chunks": []}\n', encoding="utf-8")
    with pytest.raises(ExternalDataError, match=rf"^{export}: line 2: missing field 'revision'$"):
        golden_source(export, SAMPLE_CORPUS)
    export.write_text(EXPORT_LINE % "c1", encoding="utf-8")
    with pytest.raises(ExternalDataError, match=r"^1 relevant chunks are not in the corpus at .*\(was the golden set made "
                                                r"from another corpus version\?\): q-1: c1$"):
        golden_source(export, SAMPLE_CORPUS)


def test_the_csv_and_parquet_exports_read_back_as_the_jsonl_items(tmp_path: Path):
    items = [GoldenItem("q-1", 2, "factual", "Which port, \"quoted\"?\nSecond line.", "Port 8443.",
                        (ChunkRef("c1", "h1"), ChunkRef("c2", "h2")), "cv-1", "imported"),
             GoldenItem("q-2", 1, "temporal", "And in 2.0?", "9443", (), "cv-1", "generated")]
    read = {kind: read_golden(write_golden(items, tmp_path / f"g{FORMATS[kind]}", kind, {}))
            for kind in ("jsonl", "csv", "parquet")}
    assert read["jsonl"] == items and read["csv"] == items and read["parquet"] == items


def test_a_csv_export_row_with_a_broken_chunk_list_is_named_by_row_and_field(tmp_path: Path):
    export = write_golden([GoldenItem("q-1", 1, "factual", "q?", "a", (ChunkRef("c1", "h"),), "cv-1", "generated")] * 2,
                          tmp_path / "golden-v1.csv", "csv", {})
    export.write_text(export.read_text(encoding="utf-8").replace('"c1"', '"c1', 1).replace('""c1""', '""c1', 1),
                      encoding="utf-8")
    with pytest.raises(ExternalDataError, match=rf"^{export}: row 1: relevant_chunks: not valid JSON: "):
        read_golden(export)


def test_an_imported_items_exports_keep_its_labels_spans_and_the_ragas_export_its_labels_texts(tmp_path: Path):
    from rag_assets.corpus.snapshot import snapshot_corpus
    from rag_assets.golden.build import build_golden, diff_golden
    from rag_assets.golden.repin import PinTarget
    from rag_assets.golden.export import export_golden, read_golden_records
    from rag_assets.golden.importers import read_ragas_testset
    from rag_assets.golden.models import ExternalItem
    from rag_assets.golden.pinning import pin_external_items
    from rag_assets.store.corpus_repository import SqlCorpusRepository
    from rag_assets.store.curation_repository import SqlCurationRepository
    from rag_assets.store.engine import get_engine
    from rag_assets.store.golden_repository import SqlGoldenRepository

    engine = get_engine(f"sqlite:///{tmp_path / 'store.db'}")
    corpus = SqlCorpusRepository(engine)
    version = snapshot_corpus(SAMPLE_CORPUS, ChunkerConfig(), corpus).version_id
    chunks = corpus.snapshot_chunks(version)
    first, second = next((a, b) for a, b in zip(chunks, chunks[1:]) if a.path == b.path and b.start > a.start + 200)
    documents = corpus.documents(version)
    label = documents[first.path].body[(first.start + first.end) // 2:(second.start + second.end) // 2]
    pinned, left = pin_external_items([ExternalItem("e1", "q?", "A.", relevant_texts=(label,))], documents, chunks)
    assert left == [] and SqlCurationRepository(engine).import_items(pinned, version, "ragas", "t.csv", "0" * 64).new == 1
    golden = SqlGoldenRepository(engine)
    build = build_golden(PinTarget(version, chunks, corpus), golden.accepted_items([version]))
    items = golden.version_items(golden.save_version(build, None, diff_golden((), build)).number)
    assert [i.evidence for i in items] == [pinned[0].evidence], "the store keeps the spans"
    jsonl, ragas = export_golden(items, 1, tmp_path / "out", {c.chunk_id: c.text for c in chunks},
                                 corpus.evidence_texts({e for i in items for e in i.evidence}))
    assert read_golden_records(jsonl) == items
    assert [i.relevant_texts for i in read_ragas_testset(ragas)] == [(label,)], "the label, not the chunks it touches"


def _with_an_adversarial_item() -> tuple[list[GoldenItem], dict[str, str]]:
    """A factual item on a chunk of the sample corpus and an adversarial one (no evidence), and the chunks' texts."""
    _, chunks, _ = read_chunks(SAMPLE_CORPUS, ChunkerConfig())
    items = [GoldenItem("q-1", 1, "factual", "What does it say?", "It says so.", (chunks[3].ref,), "cv-1", "generated"),
             GoldenItem("q-2", 1, "adversarial", "What does the moon cost?", "The documentation does not say.", (),
                        "cv-1", "generated")]
    return items, {c.chunk_id: c.text for c in chunks}


def test_the_exports_read_by_evaluate_keep_the_adversarial_item_even_with_ragas_columns_only(tmp_path: Path):
    """``rag_assets.evaluate`` on an export: the adversarial item stays adversarial from our JSONL, from the ragas
    export, and from the ragas export cut down to ragas' own columns (its synthesizer name says it), with the corpus
    or without; so decline accuracy is computed on it as on the golden set exported."""
    from rag_assets.golden.importers import RAGAS_COLUMNS

    items, texts = _with_an_adversarial_item()
    ragas = write_golden(items, tmp_path / "g.ragas.jsonl", "ragas", texts)
    frame = pd.read_json(ragas, lines=True)[list(RAGAS_COLUMNS)]
    cut = tmp_path / "cut.ragas.jsonl"
    frame.to_json(cut, orient="records", lines=True)
    wanted = [(i.question, i.question_type, bool(i.relevant_chunks)) for i in items]
    for golden, corpus in ((write_golden(items, tmp_path / "g.jsonl", "jsonl", {}), SAMPLE_CORPUS),
                           (ragas, SAMPLE_CORPUS), (ragas, None), (cut, SAMPLE_CORPUS), (cut, None), (frame, None)):
        source = golden_source(golden, corpus)
        assert [(i.question, i.question_type, bool(i.relevant_chunks)) for i in source.items] == wanted, golden


@pytest.mark.parametrize("corpus", [SAMPLE_CORPUS, None])
def test_an_item_without_contexts_nothing_marks_unanswerable_is_refused_naming_it(corpus: Path | None):
    frame = pd.DataFrame({"item_id": ["moon"], "user_input": ["What does the moon cost?"], "reference": ["Nothing."],
                          "reference_contexts": [[]], "synthesizer_name": ["single_hop_specific_query_synthesizer"]})
    where = "the corpus at .*corpus" if corpus else "their reference contexts"
    with pytest.raises(ExternalDataError,
                       match=rf"^1 item cannot be pinned to {where}: moon: row 1: has no reference contexts to locate "
                             r"\(mark it question_type: adversarial if nothing in the corpus answers it\)$"):
        golden_source(frame, corpus)


@pytest.mark.parametrize("corpus", [SAMPLE_CORPUS, None])
def test_an_item_marked_adversarial_in_capitals_is_adversarial(corpus: Path | None):
    """A tester's case: ``question_type: Adversarial`` was refused as an item without contexts nothing marks."""
    frame = pd.DataFrame({"item_id": ["moon"], "user_input": ["What does the moon cost?"], "reference": ["Nothing."],
                          "reference_contexts": [[]], "question_type": ["Adversarial"]})
    (item,) = golden_source(frame, corpus).items
    assert (item.question_type, item.relevant_chunks) == ("adversarial", ())
