"""Benchmark: the corpus snapshot's figures of issue 17, each as a ratio against its limit.

    python bench/snapshot.py PATH [--runs 3]   # a folder, or a .tar.gz unpacked to a temp dir
    python bench/snapshot.py ../shared/data/cpp_docs.tar.gz

* cold: a snapshot into an empty store, against reading and hashing every byte of the same files
  (the least any content-addressed snapshot must do). CPU counts the pool's worker processes too;
  wall is the elapsed time on this machine's cores. Limit 5x.
* unchanged: a second snapshot of the same files, against the stat walk (``manifest.scan``: the
  listing, the loader filter and one stat per file, which any snapshot must do). Limit 1.5x.

Everything is timed in-process (no interpreter start-up); each cold run is a fresh process with a
fresh store, so its peak RSS is its own. The machine is shared: each figure is the minimum of
``--runs`` runs, and the references are measured beside the figure they divide.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

COLD_LIMIT = 5.0
UNCHANGED_LIMIT = 1.5


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the snapshot's pool workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _min_cpu(work: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = _cpu()
        work()
        best = min(best, _cpu() - started)
    return best


def _read_and_hash(paths: list[str]) -> None:
    for path in paths:
        with open(path, "rb") as handle:
            hashlib.sha256(handle.read()).digest()


def _cold(root: str, db: str) -> dict:
    from rag_assets.corpus.manifest import scan
    from rag_assets.corpus.models import ChunkerConfig
    from rag_assets.corpus.snapshot import snapshot_corpus
    from rag_assets.store.corpus_repository import SqlCorpusRepository
    from rag_assets.store.engine import get_engine

    config = ChunkerConfig()
    paths = [file.abs_path for file in scan(Path(root), config).files]
    read_hash = _min_cpu(lambda: _read_and_hash(paths), 3)
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{db}"))
    started_cpu, started = _cpu(), time.perf_counter()
    outcome = snapshot_corpus(root, config, repo)
    return {
        "read_hash_cpu": read_hash,
        "cpu": _cpu() - started_cpu,
        "wall": time.perf_counter() - started,
        "files": outcome.document_count + len(outcome.skipped),
        "mb": outcome.total_bytes / 1e6,
        "chunks": outcome.chunk_count,
        "files_read": outcome.files_read,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _unchanged(root: str, db: str, runs: int) -> dict:
    from rag_assets.corpus.manifest import scan
    from rag_assets.corpus.models import ChunkerConfig
    from rag_assets.corpus.snapshot import snapshot_corpus
    from rag_assets.store.corpus_repository import SqlCorpusRepository
    from rag_assets.store.engine import get_engine

    config = ChunkerConfig()
    repo = SqlCorpusRepository(get_engine(f"sqlite:///{db}"))
    outcome = snapshot_corpus(root, config, repo)  # connects and warms the store once, untimed
    assert not outcome.created and outcome.files_read == 0, "the corpus changed between the phases"
    walk = snapshot = float("inf")
    for _ in range(runs * 3):  # interleaved, so a burst of load on the shared machine hits both
        walk = min(walk, _min_cpu(lambda: scan(Path(root), config), 1))
        snapshot = min(snapshot, _min_cpu(lambda: snapshot_corpus(root, config, repo), 1))
    return {"walk_cpu": walk, "cpu": snapshot,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def corpus_folder(path: Path, scratch: Path) -> Path:
    if path.is_dir():
        return path
    with tarfile.open(path) as archive:
        archive.extractall(scratch, filter="data")
    folders = [p for p in scratch.iterdir() if p.is_dir()]
    return folders[0] if len(folders) == 1 else scratch


def _phase(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _row(figure: str, seconds: float, reference_name: str, reference: float, limit: float) -> str:
    ratio = seconds / reference
    verdict = "ok" if ratio <= limit else "OVER"
    return (f"{figure:<22} {seconds:>8.3f} {reference_name:<14} {reference:>8.3f} {ratio:>7.2f}x "
            f"{limit:>5.1f}x  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the minimum is reported")
    parser.add_argument("--phase", choices=("cold", "unchanged"), help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "cold":
        print(json.dumps(_cold(str(args.path), args.db)))
        return
    if args.phase == "unchanged":
        print(json.dumps(_unchanged(str(args.path), args.db, args.runs)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = str(corpus_folder(args.path.resolve(), Path(scratch) / "corpus"))
        colds = []
        for run in range(args.runs):
            db = str(Path(scratch) / f"cold{run}.db")
            colds.append(_phase(root, "--phase", "cold", "--db", db))
        warm = _phase(root, "--phase", "unchanged", "--db", db, "--runs", str(args.runs))
    first = colds[0]
    read_hash = min(c["read_hash_cpu"] for c in colds)
    cold_rss = max(c["peak_rss_mb"] for c in colds)
    print(f"{first['files']:,} files, {first['mb']:.1f} MB, {first['chunks']:,} chunks, {first['files_read']:,} read; "
          f"{os.cpu_count()} cores; min of {args.runs} runs; peak RSS cold {cold_rss:.0f} MB, "
          f"unchanged {warm['peak_rss_mb']:.0f} MB")
    print(f"{'figure':<22} {'seconds':>8} {'reference':<14} {'seconds':>8} {'ratio':>8} {'limit':>6}")
    print(_row("cold snapshot CPU", min(c["cpu"] for c in colds), "read+hash CPU", read_hash, COLD_LIMIT))
    print(_row("cold snapshot wall", min(c["wall"] for c in colds), "read+hash CPU", read_hash, COLD_LIMIT))
    print(_row("unchanged snapshot CPU", warm["cpu"], "stat walk CPU", warm["walk_cpu"], UNCHANGED_LIMIT))


if __name__ == "__main__":
    main()
