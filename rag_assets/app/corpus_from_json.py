"""Turn a pre-chunked JSON corpus (a list of ``{chunk_link, chunk_heading, text}``, as the anthropic_docs set ships)
into a folder of Markdown files that can be snapshotted: the ``corpus-from-json`` command's use case.

The domain function does the whole step; the CLI calls it here, as it calls every other step, so an entry point
never reaches past the application layer.
"""

from __future__ import annotations

from pathlib import Path

from rag_assets.golden.importers import json_chunks_to_corpus


def corpus_from_json(chunks_json: Path, out_dir: Path) -> dict[str, str]:
    """Write one Markdown file per chunk of ``chunks_json`` into ``out_dir``; returns chunk link -> file name.
    A file already holding the right bytes is left untouched, so a second snapshot reads nothing new."""
    return json_chunks_to_corpus(chunks_json, out_dir)
