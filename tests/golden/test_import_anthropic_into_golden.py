"""The 100-item anthropic_docs set, imported as accepted items, becomes a 100-item golden version."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.corpus.models import ChunkerConfig
from rag_assets.corpus.snapshot import snapshot_corpus
from rag_assets.golden.build import build_golden, diff_golden
from rag_assets.golden.repin import PinTarget
from rag_assets.golden.importers import json_chunks_to_corpus, read_anthropic_docs_dataset
from rag_assets.golden.pinning import pin_external_items
from rag_assets.store.corpus_repository import SqlCorpusRepository
from rag_assets.store.curation_repository import SqlCurationRepository
from rag_assets.store.engine import get_engine
from rag_assets.store.golden_repository import SqlGoldenRepository
from tests.conftest import SHARED_DATA

DATA = SHARED_DATA / "anthropic_docs_rag"


@pytest.mark.skipif(not DATA.exists(), reason=f"reference data not found at {DATA} (only next to the project checkout)")
def test_importing_the_100_item_set_yields_100_golden_items_pinned_to_the_snapshot(tmp_path: Path):
    files = json_chunks_to_corpus(DATA / "anthropic_docs.json", tmp_path / "corpus")
    engine = get_engine(f"sqlite:///{tmp_path / 'store.db'}")
    corpus = SqlCorpusRepository(engine)
    version = snapshot_corpus(tmp_path / "corpus", ChunkerConfig(), corpus).version_id
    chunks = corpus.snapshot_chunks(version)
    items = read_anthropic_docs_dataset(DATA / "docs_evaluation_dataset.json", DATA / "anthropic_docs.json")
    mapped, unmapped = pin_external_items(items, corpus.documents(version), chunks)
    assert (len(items), len(mapped), unmapped) == (100, 100, [])
    new = SqlCurationRepository(engine).import_items(mapped, version, "anthropic_docs", "docs_evaluation_dataset.json", "a" * 64)
    assert new.new == 100
    assert SqlCurationRepository(engine).import_items(mapped, version, "anthropic_docs", "x", "a" * 64).new == 0, "idempotent"
    golden = SqlGoldenRepository(engine)
    build = build_golden(PinTarget(version, chunks, corpus), golden.accepted_items([version]))
    saved = golden.save_version(build, None, diff_golden((), build))
    stored = golden.version_items(saved.number)
    assert len(stored) == 100 and build.stale == ()
    path_of = {c.chunk_id: c.path for c in chunks}
    for item, pinned in zip(sorted(stored, key=lambda i: i.item_id), sorted(mapped, key=lambda m: f"anthropic_docs:{m.item.external_id}")):
        assert item.item_id == f"anthropic_docs:{pinned.item.external_id}"
        labelled = {files[link] for link in pinned.item.external_chunk_ids}
        assert {path_of[r.chunk_id] for r in item.relevant_chunks} == labelled
        assert item.evidence == pinned.evidence and {e.path for e in item.evidence} == labelled, "kept as spans"
