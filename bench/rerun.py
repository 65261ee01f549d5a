"""Benchmark what issue 17 asks of re-runs and of scale, each figure as a ratio against its limit.

    python bench/rerun.py [../shared/data/cpp_docs.tar.gz] [--figures cli,linear,unchanged,shards,judged,rss]
        [--items 4000] [--small 1000] [--rss-items 10000] [--runs 3] [--postgres]

``cli``: CPU (user + system, the process and its children) of a second ``rag-assets run`` on an
unchanged home against the first, on the sample corpus in a temporary home (limit 0.25).
``unchanged``: an unchanged evaluation re-run of ``items`` items (250 per shard, the fastest of
``runs``) against the cold run, the first of that home (limit 0.05).
``shards``: an unchanged evaluation re-run of ``items`` items with 40 shards against 10, the fastest
of ``runs`` each (limit 1.2); as no shard step runs on an unchanged re-run, ``judged`` is the same with
every shard judged again (kept outcomes forgotten before each run, the answers from the LLM cache, as after
a judge change that keeps the prompts): what each extra shard step costs.
``linear``: seconds per item of a cold evaluation (offline judge, 250 items per shard) at ``items``
against ``small`` items (limit 1.2). ``rss``: the peak RSS of a cold evaluation of ``rss-items``
items (limit 600 MB). The evaluation figures use bench/scale.py's phases (a synthetic golden set
over the corpus, answered once by the offline reference system; each run a fresh process). With
``--postgres`` they run on the deployment's storage: Dagster's instance from deploy/dagster.yaml and the
store, each home on databases of its own on the PostgreSQL server at 127.0.0.1 (dropped afterwards).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

LIMITS = {"cli": 0.25, "unchanged": 0.05, "shards": 1.2, "linear": 1.2, "rss": 600}


def _row(figure: str, measured: float, reference_name: str, reference: float, limit: float) -> str:
    ratio = measured / reference
    return (f"{figure:<34} {measured:>9.2f} {reference_name:<22} {reference:>9.2f} {ratio:>7.2f} {limit:>6.2f}  "
            f"{'ok' if ratio <= limit else 'OVER'}")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cli_run(env: dict) -> float:
    """CPU seconds of one ``rag-assets run`` (a fresh interpreter, as a user starts it)."""
    before = _children_cpu()
    subprocess.run([sys.executable, "-m", "rag_assets.cli", "run"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return _children_cpu() - before


def cli_figure(scratch: Path) -> str:
    shutil.copytree(ROOT / "data" / "corpus", scratch / "corpus")
    shutil.copytree(ROOT / "data" / "curation", scratch / "curation")
    env = {**os.environ, "RAG_ASSETS_HOME": str(scratch / "home"), "RAG_ASSETS_CORPUS_ROOT": str(scratch / "corpus"),
           "RAG_ASSETS_CURATION_ROOT": str(scratch / "curation")}
    for name in ("DAGSTER_HOME", "RAG_ASSETS_DATABASE_URL", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    first, second = _cli_run(env), _cli_run(env)
    return _row("second rag-assets run (CPU s)", second, "first run (CPU s)", first, LIMITS["cli"])


class Evaluations:
    """bench/scale.py's phases in one scratch home per golden-set size (the corpus extracted once)."""

    def __init__(self, corpus_archive: Path, scratch: Path, databases: contextlib.ExitStack | None = None) -> None:
        from snapshot import corpus_folder

        self.scratch = scratch
        self.databases = databases  # where each home's PostgreSQL databases are made (None: SQLite in the home)
        self.postgres: dict[int, tuple[str, str]] = {}  # items -> that home's (Dagster, store) databases
        self.corpus = corpus_folder(corpus_archive.resolve(), scratch / "corpus")
        self.homes: dict[int, str] = {}
        self.cold: dict[int, float] = {}  # seconds of the first evaluation of each home: its LLM cache was empty

    def _env(self, items: int) -> None:
        home = self.scratch / f"n{items}"
        (home / "dagster").mkdir(parents=True, exist_ok=True)
        os.environ.update({"RAG_ASSETS_HOME": str(home / "home"), "DAGSTER_HOME": str(home / "dagster"),
                           "RAG_ASSETS_CORPUS_ROOT": str(self.corpus), "BENCH_SCRATCH": str(home),
                           "BENCH_JUDGE": "offline"})
        for name in ("RAG_ASSETS_DATABASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            os.environ.pop(name, None)
        if self.databases is not None:
            self._postgres(items, home)

    def _postgres(self, items: int, home: Path) -> None:
        """Point Dagster (deploy/dagster.yaml) and the store at this home's own PostgreSQL databases."""
        from tests.conftest import PG_HOST, PG_PORT, PG_USER, postgres_database, postgres_url

        if items not in self.postgres:
            shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster" / "dagster.yaml")
            self.postgres[items] = tuple(self.databases.enter_context(postgres_database(f"rag_assets_bench_{part}"))
                                         for part in ("dagster", "store"))
        dagster_db, store_db = self.postgres[items]
        os.environ.update({"DAGSTER_PG_HOST": PG_HOST, "DAGSTER_PG_PORT": str(PG_PORT), "DAGSTER_PG_USER": PG_USER,
                           "DAGSTER_PG_PASSWORD": "", "DAGSTER_PG_DB": dagster_db,
                           "RAG_ASSETS_DATABASE_URL": postgres_url(store_db)})

    def run(self, items: int, shard_size: int, *extra: str) -> dict:
        """One in-process evaluation of ``items`` items (set up on first use) with ``shard_size``; ``extra``
        are bench/scale.py phase options (``--forget-kept``)."""
        import scale

        self._env(items)
        args = argparse.Namespace(path=self.corpus, items=items, shard_size=shard_size, workers=1)
        if items not in self.homes:
            self.homes[items] = scale._phase(args, "--phase", "setup")["version"]
        result = scale._phase(args, "--phase", "in_process", "--version", self.homes[items], *extra)
        self.cold.setdefault(items, result["seconds"])
        return result

    def cold_seconds(self, items: int) -> float:
        """The cold run of this size's home: the one an earlier figure ran, or one now (250 items per shard)."""
        if items not in self.cold:
            self.run(items, 250)
        return self.cold[items]


def unchanged_figure(evaluations: Evaluations, items: int, runs: int) -> str:
    cold = evaluations.cold_seconds(items)
    rerun = min(evaluations.run(items, 250)["seconds"] for _ in range(runs))
    return _row(f"unchanged re-run, {items:,} items (s)", rerun, "cold run (s)", cold, LIMITS["unchanged"])


def shards_figure(evaluations: Evaluations, items: int, runs: int, *extra: str) -> str:
    """The fastest of ``runs`` re-runs with each shard count, taken in turns (the machine is shared); with
    ``--forget-kept`` in ``extra``, every shard is judged again (its answers from the LLM cache)."""
    seconds: dict[int, list[float]] = {10: [], 40: []}
    for shards in seconds:  # fills the LLM cache (if no cold run did), each layout's kept shards, the OS's file cache
        evaluations.run(items, items // shards)
    for _ in range(runs):
        for shards in seconds:
            seconds[shards].append(evaluations.run(items, items // shards, *extra)["seconds"])
    label = "judged again" if extra else "re-run"
    return _row(f"{label}, 40 shards, {items:,} items (s)", min(seconds[40]), "10 shards (s)", min(seconds[10]),
                LIMITS["shards"])


def linear_figure(evaluations: Evaluations, small: int, items: int) -> str:
    per_item = {n: evaluations.run(n, 250)["seconds"] / n * 1000 for n in (small, items)}
    return _row(f"cold, ms per item at {items:,}", per_item[items], f"at {small:,} (ms)", per_item[small],
                LIMITS["linear"])


def rss_figure(evaluations: Evaluations, items: int) -> str:
    peak = evaluations.run(items, 1000)["peak_rss_mb"]
    return _row(f"peak RSS, {items:,}-item evaluation (MB)", peak, "limit (MB)", LIMITS["rss"], 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, nargs="?", default=ROOT.parent / "shared" / "data" / "cpp_docs.tar.gz")
    parser.add_argument("--figures", default="cli,linear,unchanged,shards,rss")
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--rss-items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="re-runs per figure and shard count (the fastest counts)")
    parser.add_argument("--postgres", action="store_true", help="the evaluation figures on PostgreSQL at 127.0.0.1")
    args = parser.parse_args()
    figures = args.figures.split(",")
    print(f"{'figure':<34} {'measured':>9} {'against':<22} {'value':>9} {'ratio':>7} {'limit':>6}", flush=True)
    with tempfile.TemporaryDirectory() as scratch_dir, contextlib.ExitStack() as databases:
        scratch = Path(scratch_dir)
        if "cli" in figures:
            (scratch / "cli").mkdir()
            print(cli_figure(scratch / "cli"), flush=True)
        if {"unchanged", "shards", "judged", "linear", "rss"} & set(figures):
            evaluations = Evaluations(args.path, scratch / "evaluations", databases if args.postgres else None)
            if "linear" in figures:  # first: its runs are cold only on a new home
                print(linear_figure(evaluations, args.small, args.items), flush=True)
            if "unchanged" in figures:  # before shards: its cold run is the home's first
                print(unchanged_figure(evaluations, args.items, args.runs), flush=True)
            if "shards" in figures:
                print(shards_figure(evaluations, args.items, args.runs), flush=True)
            if "judged" in figures:
                print(shards_figure(evaluations, args.items, args.runs, "--forget-kept"), flush=True)
            if "rss" in figures:
                print(rss_figure(evaluations, args.rss_items), flush=True)


if __name__ == "__main__":
    main()
