"""Benchmark: re-anchoring a golden set's evidence spans after a corpus change of 1% of the files.

    python bench/reanchor.py PATH [--items-every 1]   # a folder, or a .tar.gz unpacked to a temp dir
    python bench/reanchor.py ../shared/data/cpp_docs.tar.gz

A corpus is snapshotted into a fresh SQLite store, and every document gets one golden item whose
evidence is a span of its own (a stretch of the body inside its first chunk, as an imported label
would be). Then 1% of the files change: half get a paragraph inserted at the top (every offset after it
moves: their items must be repinned, not made stale), half get a word changed inside the evidence (their
items must go stale). The second snapshot is taken, and the golden set is pinned to it
(``golden.repin.pin_items``, what the golden_set asset runs): its time is the figure, beside the time of
the second snapshot. The counts are checked, so a fast wrong answer does not pass as a figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import corpus_folder  # noqa: E402  (the sibling benchmark's unpacking)

from rag_assets.corpus.manifest import scan  # noqa: E402
from rag_assets.corpus.models import ChunkerConfig  # noqa: E402
from rag_assets.corpus.snapshot import snapshot_corpus  # noqa: E402
from rag_assets.evidence.spans import Span  # noqa: E402
from rag_assets.golden.models import GoldenItem  # noqa: E402
from rag_assets.golden.repin import PinTarget, pin_items  # noqa: E402
from rag_assets.store.corpus_repository import SqlCorpusRepository  # noqa: E402
from rag_assets.store.engine import get_engine  # noqa: E402

EVIDENCE_CHARS = 200


def _items(corpus: SqlCorpusRepository, version: str) -> list[GoldenItem]:
    """One item per document with a chunk of at least ``EVIDENCE_CHARS``: the middle of its first chunk."""
    documents = corpus.documents(version)
    first: dict = {}
    for chunk in corpus.snapshot_chunks(version):
        if chunk.end - chunk.start >= EVIDENCE_CHARS and chunk.text.strip():
            first.setdefault(chunk.path, chunk)
    items = []
    for path, chunk in sorted(first.items()):
        start = chunk.start + (chunk.end - chunk.start - EVIDENCE_CHARS) // 2
        span = documents.evidence(Span(path, start, start + EVIDENCE_CHARS))
        items.append(GoldenItem(f"item-{len(items)}", 1, "factual", f"What does {path} say?", "It says so.",
                                (chunk.ref,), version, evidence=(span,)))
    return items


def _change(root: Path, items: list[GoldenItem], corpus: SqlCorpusRepository, version: str) -> tuple[int, int]:
    """Change 1% of the files with an item: the first half moved down, the second half edited inside the
    evidence. Returns (moved, edited)."""
    by_path = {item.evidence[0].path: item for item in items}
    files = [f for f in scan(root, ChunkerConfig()).files if f.path in by_path]
    count = max(2, len(files) // 100)
    chosen = files[:: max(1, len(files) // count)][:count]
    texts = corpus.evidence_texts([by_path[f.path].evidence[0] for f in chosen])
    moved = edited = 0
    for n, file in enumerate(chosen):
        path = Path(file.abs_path)
        body = path.read_text(encoding="utf-8")
        if n % 2 == 0:
            path.write_text("A paragraph inserted at the top for the benchmark.\n\n" + body, encoding="utf-8")
            moved += 1
        else:
            old = texts[by_path[file.path].evidence[0]]
            middle = len(old) // 2
            path.write_text(body.replace(old, old[:middle] + " EDITED " + old[middle:], 1), encoding="utf-8")
            edited += 1
    return moved, edited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = corpus_folder(args.path.resolve(), Path(scratch) / "corpus")
        corpus = SqlCorpusRepository(get_engine(f"sqlite:///{Path(scratch) / 'store.db'}"))
        version = snapshot_corpus(root, ChunkerConfig(), corpus).version_id
        items = _items(corpus, version)
        moved, edited = _change(root, items, corpus, version)
        started = time.perf_counter()
        new = snapshot_corpus(root, ChunkerConfig(), corpus).version_id
        snapshot_seconds = time.perf_counter() - started
        started = time.perf_counter()
        chunks = corpus.snapshot_chunks(new)
        load_seconds = time.perf_counter() - started
        started = time.perf_counter()
        pinning = pin_items(items, PinTarget(new, chunks, corpus))
        pin_seconds = time.perf_counter() - started
    ok = len(pinning.repinned) >= moved and len(pinning.stale) == edited
    print(f"{len(items):,} items on as many documents; {moved + edited} files changed ({moved} moved down, "
          f"{edited} edited in the evidence); {os.cpu_count()} cores; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"second snapshot {snapshot_seconds:.2f} s; loading its {len(chunks):,} chunks {load_seconds:.2f} s; "
          f"re-anchoring {pin_seconds:.3f} s: {len(pinning.current) - len(pinning.repinned):,} intact, "
          f"{len(pinning.repinned)} repinned, {len(pinning.stale)} stale ({'as expected' if ok else 'NOT as expected'})")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
