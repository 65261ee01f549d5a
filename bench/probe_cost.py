"""Benchmark what the judge probes cost beside the evaluation they probe: judge calls and wall time.

    python bench/probe_cost.py [--items 500] [--corpus data/corpus] [--judge fake|offline]
        [--latency 0.2] [--concurrency 8] [--again]

``items`` synthetic factual golden items are made from ``corpus`` (a folder or a ``.tar.gz``) as
bench/scale.py makes them: one per chunk, every n-th chunk, its opening words as the reference. The
bundled sample has 309 chunks, so 500 items and more need a larger corpus such as
../shared/data/cpp_docs.tar.gz (the offline question generator bench/judge_calls.py uses yields only
268 distinct factual items from the sample and 220 from cpp_docs). They are imported, built into the
golden set and answered once by the offline reference system. Then the evaluation asset and the
judge_probes asset are materialized, in that order, with Dagster on a store in a temporary folder: the
code path of a deployment.

``fake`` judges with the real anthropic SDK against the project's fake Messages API on 127.0.0.1
(answering after ``latency`` seconds), and calls are counted at that server: what Claude would bill.
``offline`` judges with the offline heuristics; its calls are the evaluation's LLM cache misses and the
probes' own count. Beside the measured share, the asset's own figures are printed: the probe calls it
sent to the judge, those the LLM cache answered, and its share (every call the probes asked over every call
the evaluation asks, cached or not, both counted alike). ``--again`` materializes both once more,
unchanged: what a re-run bills when the LLM cache has the answers (the ``repeat`` probe alone bypasses it).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import dagster as dg

    from rag_assets.defs.resources import LLMResource

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

API_KEY = "fake-key-for-the-local-fake-server"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}  # Dagster's step events left out


def _environment(scratch: Path) -> None:
    """A store, Dagster home and report folder of this run's own, and no real Claude key or URL."""
    (scratch / "dagster").mkdir()
    os.environ.update({"RAG_ASSETS_HOME": str(scratch / "home"), "DAGSTER_HOME": str(scratch / "dagster")})
    for name in ("RAG_ASSETS_DATABASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "RAG_ASSETS_PROBE_SAMPLE"):
        os.environ.pop(name, None)


def _golden(corpus: Path, items: int, shard_size: int, scratch: Path) -> tuple[str, int]:
    """The synthetic golden set, imported and answered: its corpus version and the corpus's chunks. Exits when
    the corpus has fewer chunks than ``items``."""
    import dagster as dg

    from scale import synthetic_golden

    version, chunks, golden = synthetic_golden(str(corpus), items, shard_size, dg.DagsterInstance.get(),
                                               scratch / "golden")
    if golden < items:
        sys.exit(f"{corpus} has {chunks} chunks, so {golden} distinct items, not {items}: give a larger --corpus")
    return version, chunks


def _materialize(asset: dg.AssetsDefinition, version: str, llm: LLMResource, run_config: dict) -> tuple[dict, float]:
    """One asset materialized on ``version``: its metadata and wall seconds."""
    import dagster as dg

    from rag_assets.defs.resources import RESOURCES

    started = time.perf_counter()
    result = dg.materialize([asset], partition_key=version, instance=dg.DagsterInstance.get(),
                            resources={**RESOURCES, "llm": llm}, run_config={**run_config, **QUIET})
    seconds = time.perf_counter() - started
    event = [e for e in result.get_asset_materialization_events() if e.asset_key == asset.key][-1]
    return {k: v.value for k, v in event.materialization.metadata.items()}, seconds


@dataclass(frozen=True)
class Measured:
    """One evaluation and its probes: judge calls (as billed, or as computed offline) and wall seconds, with the
    figures the judge_probes asset reports itself (its calls sent and cached, the evaluation's calls, its share)."""

    judge: str
    items: int
    evaluation_calls: int
    evaluation_seconds: float
    probe_items: int
    probe_calls: int
    probe_seconds: float
    asset_probe_calls: int
    asset_probe_cached: int
    evaluation_asked: int
    asset_share: float

    @property
    def share(self) -> float:
        return self.probe_calls / self.evaluation_calls if self.evaluation_calls else math.nan


def _measure(version: str, llm: LLMResource, count: Callable[[], int] | None, shard_size: int) -> Measured:
    """The evaluation then its probes; ``count()`` is the judge calls so far (None: the offline judge, whose calls
    are the evaluation's LLM cache misses and the probes' own count)."""
    from rag_assets.defs.assets.evaluation import evaluation
    from rag_assets.defs.assets.probes import judge_probes

    before = count() if count else 0
    scored, evaluation_seconds = _materialize(
        evaluation, version, llm, {"ops": {"evaluation": {"config": {"shard_size": shard_size, "severity": "WARN"}}}})
    between = count() if count else 0
    probed, probe_seconds = _materialize(judge_probes, version, llm, {})
    after = count() if count else 0
    return Measured(scored["judge"], scored["items"], between - before if count else scored["llm_cache_misses"],
                    evaluation_seconds, probed["items_probed"], after - between if count else probed["probe_calls"],
                    probe_seconds, probed["probe_calls"], probed["probe_cached"], probed["evaluation_judge_calls"],
                    probed["share_of_evaluation_calls"])


def _report(args: argparse.Namespace, rows: list[Measured], loads: tuple[float, float]) -> None:
    how = (f"calls counted at the fake Messages API (latency {args.latency * 1000:.0f} ms, concurrency "
           f"{args.concurrency})" if args.judge == "fake" else "offline judge: judgments computed")
    print(f"{rows[0].items} items from {args.corpus}, judge {rows[0].judge}; {how}")
    print(f"{os.cpu_count()} cores, 1-minute load average {loads[0]:.2f} at the start, {loads[1]:.2f} at the end")
    for label, row in zip(("", "unchanged re-run: "), rows):
        print(f"{label}evaluation judge calls   {row.evaluation_calls:>7}   wall {row.evaluation_seconds:.2f} s")
        print(f"{label}probe items              {row.probe_items:>7}")
        print(f"{label}probe judge calls        {row.probe_calls:>7}   wall {row.probe_seconds:.2f} s")
        share = f"{row.share:>7.2%}" if row.evaluation_calls else f"{'n/a':>7}"
        print(f"{label}measured share           {share}   (limit 15% at 500 items or more)")
        print(f"{label}the asset's own figure   {row.asset_share:>7.2%}   ({row.asset_probe_calls} probe calls sent + "
              f"{row.asset_probe_cached} cached, over {row.evaluation_asked} evaluation calls sent or cached)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--corpus", type=Path, default=ROOT / "data" / "corpus")
    parser.add_argument("--judge", choices=("fake", "offline"), default="fake")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--shard-size", type=int, default=250)
    parser.add_argument("--again", action="store_true", help="then both again, unchanged (answers in the LLM cache)")
    args = parser.parse_args()

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        _environment(scratch)
        from rag_assets.defs.resources import LLMResource
        from snapshot import corpus_folder
        from tests.fakes.anthropic_server import FakeAnthropicServer
        from tests.fakes.claude_judge import judge_responder

        corpus = corpus_folder(args.corpus.resolve(), scratch / "corpus")
        os.environ["RAG_ASSETS_CORPUS_ROOT"] = str(corpus)
        started = time.perf_counter()
        version, chunks = _golden(corpus, args.items, args.shard_size, scratch)
        seconds = time.perf_counter() - started
        print(f"golden set of {args.items} items over {chunks} chunks, answered in {seconds:.1f} s", flush=True)
        runs = 2 if args.again else 1
        if args.judge == "offline":
            rows = [_measure(version, LLMResource(provider="offline"), None, args.shard_size) for _ in range(runs)]
        else:
            with FakeAnthropicServer(judge_responder, latency=args.latency) as server:
                llm = LLMResource(provider="anthropic", api_key=API_KEY, base_url=server.base_url,
                                  max_concurrency=args.concurrency)
                rows = [_measure(version, llm, server.count, args.shard_size) for _ in range(runs)]
    _report(args, rows, (load, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
