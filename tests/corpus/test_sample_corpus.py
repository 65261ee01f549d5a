"""The bundled sample corpus is fit for every later stage: both versions, all formats, facts as listed."""

from pathlib import Path

import yaml

from rag_assets.corpus.manifest import build_manifest
from rag_assets.corpus.models import ChunkerConfig
from tests.conftest import SAMPLE_CORPUS

FACTS = Path(__file__).resolve().parents[1] / "fixtures" / "sample_corpus_facts.yaml"


def test_the_sample_corpus_loads_whole_with_two_product_versions_and_three_formats():
    manifest = build_manifest(SAMPLE_CORPUS, ChunkerConfig(), {})
    assert manifest.skipped == []
    assert 30 <= len(manifest.entries) <= 60
    kinds = [meta.kind for meta in manifest.loaded.values()]
    assert (kinds.count("text"), kinds.count("html")) == (3, 3)
    assert {meta.version for meta in manifest.loaded.values()} == {"1.6", "2.0"}
    assert all(meta.date and meta.title for meta in manifest.loaded.values())


def test_every_changed_fact_is_stated_in_the_document_the_facts_file_names():
    facts = yaml.safe_load(FACTS.read_text())
    assert len(facts["changed_facts"]) >= 12 and len(facts["deprecated"]) >= 4
    for fact in facts["changed_facts"]:
        for side in ("v1", "v2"):
            text = (SAMPLE_CORPUS / fact[side]["doc"]).read_text()
            assert fact[side]["value"] in text, (fact["fact"], side)
