"""Chunk ids, offsets, headings and document metadata of the bundled sample corpus, pinned.

Chunk ids enter golden items, RAG results and scores: a faster loader or chunker that moved one
boundary or changed one id would orphan every stored question. These values were taken before the
snapshot's cold path was optimised; a change that alters them must bump ``SNAPSHOT_FORMAT``.
"""

import hashlib

import pytest

from rag_assets.corpus.manifest import build_manifest
from rag_assets.corpus.models import ChunkerConfig, DocumentMeta
from tests.conftest import SAMPLE_CORPUS

SMALL = ChunkerConfig(target_chars=200, overlap_chars=40, min_chars=50)

API = "REST API reference overview (2.0)"
FAQ = "Kestrel Sync frequently asked questions"
PINNED = {
    "v2/api-reference.md": (
        DocumentMeta(API, "2.0", "2025-02-18", "markdown"),
        [("6ab82e32bbefbc19", 1, 379, API),
         ("d2f3f5d44cefae23", 381, 813, f"{API} > Conventions"),
         ("7ddf581abf40548d", 815, 1327, f"{API} > Resources"),
         ("191d84d1f6bd6257", 1329, 1844, f"{API} > Resources > Files"),
         ("73ebe9bccf0f54e9", 1846, 2281, f"{API} > Resources > Snapshots and restores"),
         ("014c7c5ecb21fe0e", 2283, 2769, f"{API} > Resources > Members, devices and clients"),
         ("3095dbbbf3000bb4", 2771, 3415, f"{API} > Resources > Batch"),
         ("472115b8efc1bdcd", 3417, 4112, f"{API} > Webhooks")],
    ),
    "common/faq.html": (
        DocumentMeta(FAQ, "2.0", "2025-03-03", "html"),
        [("d5ad9d37ba9cf343", 0, 641, ""),
         ("b00e33cebb8b185b", 643, 1193, f"{FAQ} > How long can I get old versions back?"),
         ("314f25514f720d0e", 1195, 1726, f"{FAQ} > Which devices can I use?"),
         ("d72b46f3b2e17a3f", 1728, 2183, f"{FAQ} > Can Kestrel Labs see my files?"),
         ("8e45a3778913af71", 2185, 2426, f"{FAQ} > Does Kestrel Sync work offline?")],
    ),
    "v1/error-codes.txt": (
        DocumentMeta("Error codes reference (1.6)", "1.6", "2024-09-16", "text"),
        [("7d959270e7deb286", 1, 1112, ""),
         ("9cfbf9d657c706e3", 971, 2162, ""),
         ("c0ebbaf5e5b4c9b4", 2018, 3139, ""),
         ("5075551c46a7b2c1", 2990, 3457, "")],
    ),
}


def _digest(chunked) -> str:
    """One hash over every chunk's id, place, heading and text hash, in path and reading order."""
    digest = hashlib.sha256()
    for path in sorted(chunked):
        for c in chunked[path]:
            digest.update(f"{c.chunk_id}\0{c.path}\0{c.ordinal}\0{c.start}\0{c.end}\0{c.heading}\0{c.content_hash}\n"
                          .encode())
    return digest.hexdigest()


def test_three_real_documents_keep_their_metadata_chunk_ids_and_offsets():
    manifest = build_manifest(SAMPLE_CORPUS, ChunkerConfig(), {}, chunk=True)
    for path, (meta, chunks) in PINNED.items():
        assert manifest.loaded[path] == meta
        assert [(c.chunk_id, c.start, c.end, c.heading) for c in manifest.chunked[path]] == chunks


@pytest.mark.parametrize(("config", "version", "count", "digest"), [
    (ChunkerConfig(), "cv-4f76775b215c", 309, "2ed1f53210ed5c9bd825d483ea7c5f22d00dec86b5134155eeaeda45a914e10c"),
    # Small chunks: long paragraphs are cut at lines, sentences and words, and overlaps are everywhere.
    (SMALL, "cv-679fd972b95e", 1265, "ecac029c2218d4a99a1650d8d53575c34aa0e1429ee7716cfc8aef0fa19994ab"),
])
def test_every_chunk_of_the_sample_corpus_keeps_its_id_offsets_and_heading(config, version, count, digest):
    manifest = build_manifest(SAMPLE_CORPUS, config, {}, chunk=True)
    assert manifest.version_id == version
    assert sum(len(chunks) for chunks in manifest.chunked.values()) == count
    assert _digest(manifest.chunked) == digest
