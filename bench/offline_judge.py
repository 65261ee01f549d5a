"""Benchmark the offline judge's re-run: an unchanged evaluation answered from the LLM call cache.

    python bench/offline_judge.py [--corpus ../shared/data/cpp_docs.tar.gz] [--items 1000] [--repeat 3]

``items`` synthetic items of a public corpus (one factual question per chunk, as bench/scale.py makes
them), answered by the reference system, are scored by the offline heuristics (``evaluate``, the
function a judge shard calls) without the cache, then from an empty cache (cold: every judgment is
computed and written) and again unchanged (the re-run: every judgment is read from the cache). Times
are the minimum of ``repeat`` runs of the scoring alone (the world is built once); ``computed`` are
the judgments the heuristics made (cache misses). The re-run's limit is 5% of the cold run (issue 17).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "cpp_docs.tar.gz")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from snapshot import corpus_folder

    from rag_assets.llm.offline import OfflineClient
    from rag_assets.scoring.embedding import HashingEmbedder
    from rag_assets.scoring.evaluate import evaluate
    from rag_assets.store.engine import get_engine
    from rag_assets.store.llm_cache_repository import SqlLLMCache
    from tests.fakes.judge_world import synthetic_world

    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        world = synthetic_world(get_engine(f"sqlite:///{scratch / 'world.db'}"), args.items,
                                corpus_folder(args.corpus.resolve(), scratch / "corpus"))

        def score(cache: SqlLLMCache | None) -> tuple[float, int, list]:
            started = time.perf_counter()
            outcome = evaluate(world.items, world.responses, world.versions, world.statements, OfflineClient(), cache,
                               HashingEmbedder(), 5)
            return time.perf_counter() - started, outcome.stats.cache_misses, [i.values for i in outcome.items]

        rows: dict[str, list[tuple[float, int, list]]] = {"no cache": [], "cold": [], "unchanged re-run": []}
        for attempt in range(args.repeat):
            cache = SqlLLMCache(get_engine(f"sqlite:///{scratch / f'cache{attempt}.db'}"))
            rows["no cache"].append(score(None))
            rows["cold"].append(score(cache))
            rows["unchanged re-run"].append(score(cache))
    scores = {tuple(map(str, run[2])) for runs in rows.values() for run in runs}
    assert len(scores) == 1, "every run scores alike"
    best = {label: min(runs, key=lambda r: r[0]) for label, runs in rows.items()}
    cold = best["cold"][0]
    print(f"offline judge, {len(world.items)} synthetic items of {args.corpus.name}, k=5, min of {args.repeat} runs")
    print(f"| run | seconds | judgments computed | / cold |")
    print("|---|---:|---:|---:|")
    for label, (seconds, computed, _) in best.items():
        print(f"| {label} | {seconds:.2f} | {computed:,} | {seconds / cold:.3f} |")


if __name__ == "__main__":
    main()
