"""Benchmark: snapshot a folder cold (empty store) and warm (unchanged), with peak RSS.

    python bench/snapshot.py PATH            # a folder, or a .tar.gz that is unpacked to a temp dir
    python bench/snapshot.py ../shared/data/cpp_docs.tar.gz

Each phase runs in a fresh process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def _phase(root: str, db: str) -> dict:
    from rag_assets.corpus.models import ChunkerConfig
    from rag_assets.corpus.snapshot import snapshot_corpus
    from rag_assets.store.corpus_repository import SqlCorpusRepository
    from rag_assets.store.engine import get_engine

    repo = SqlCorpusRepository(get_engine(f"sqlite:///{db}"))
    started = time.perf_counter()
    outcome = snapshot_corpus(root, ChunkerConfig(), repo)
    seconds = time.perf_counter() - started
    return {
        "files": outcome.document_count + len(outcome.skipped),
        "documents": outcome.document_count,
        "mb": round(outcome.total_bytes / 1e6, 1),
        "chunks": outcome.chunk_count,
        "files_read": outcome.files_read,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def corpus_folder(path: Path, scratch: Path) -> Path:
    if path.is_dir():
        return path
    with tarfile.open(path) as archive:
        archive.extractall(scratch, filter="data")
    folders = [p for p in scratch.iterdir() if p.is_dir()]
    return folders[0] if len(folders) == 1 else scratch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(_phase(str(args.path), args.db)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = corpus_folder(args.path.resolve(), Path(scratch) / "corpus")
        db = str(Path(scratch) / "bench.db")
        print(f"{'phase':<6} {'files':>6} {'MB':>6} {'chunks':>7} {'read':>6} {'seconds':>8} {'peak RSS MB':>12}")
        for phase in ("cold", "warm"):
            out = subprocess.run([sys.executable, __file__, str(root), "--phase", phase, "--db", db],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            print(f"{phase:<6} {r['files']:>6} {r['mb']:>6} {r['chunks']:>7} {r['files_read']:>6} "
                  f"{r['seconds']:>8} {r['peak_rss_mb']:>12}")


if __name__ == "__main__":
    main()
