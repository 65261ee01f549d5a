"""The corpus-from-json use case: two chunks become two Markdown files with front matter, and a second run
rewrites neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.app.corpus_from_json import corpus_from_json
from rag_assets.corpus.models import sha256_hex
from rag_assets.golden.importers import ExternalDataError

LIMITS = "https://docs.example.com/api/limits#per-key"
KEYS = "https://docs.example.com/api/keys"


def test_each_chunk_becomes_one_markdown_file_named_by_its_link(tmp_path: Path):
    chunks = tmp_path / "chunks.json"
    chunks.write_text(json.dumps([{"chunk_link": LIMITS, "chunk_heading": "Rate limits", "text": "50 per minute."},
                                  {"chunk_link": KEYS, "chunk_heading": "", "text": "Rotate keys.\n"}]))

    written = corpus_from_json(chunks, tmp_path / "corpus")

    limits, keys = f"api-limits-per-key-{sha256_hex(LIMITS)[:10]}.md", f"api-keys-{sha256_hex(KEYS)[:10]}.md"
    assert written == {LIMITS: limits, KEYS: keys}
    assert (tmp_path / "corpus" / limits).read_text(encoding="utf-8") == (
        f"---\ntitle: Rate limits\nsource: {LIMITS}\n---\n50 per minute.\n")
    assert (tmp_path / "corpus" / keys).read_text(encoding="utf-8") == f"---\nsource: {KEYS}\n---\nRotate keys.\n"
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "corpus").iterdir()}
    assert corpus_from_json(chunks, tmp_path / "corpus") == written
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "corpus").iterdir()} == before


def test_a_repeated_link_names_the_file_and_the_item_and_writes_nothing(tmp_path: Path):
    chunks = tmp_path / "chunks.json"
    chunks.write_text(json.dumps([{"chunk_link": KEYS, "chunk_heading": "", "text": "a"},
                                  {"chunk_link": KEYS, "chunk_heading": "", "text": "b"}]))
    with pytest.raises(ExternalDataError, match="field 'chunk_link' repeats the link of item 0"):
        corpus_from_json(chunks, tmp_path / "corpus")
    assert not (tmp_path / "corpus").exists()
