"""Benchmark the judge's call budget: calls per item and wall time, through the real SDK.

    python bench/judge_calls.py [--items 50] [--latency 0.2] [--concurrency 8]

Golden items are generated offline from the sample corpus, answered by the reference system,
then judged with the Anthropic client against the project's fake Messages API server (127.0.0.1)
answering after ``latency`` seconds. Calls are counted at the server; the run is repeated to show
that an unchanged re-run makes none.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    from rag_assets.llm.anthropic_client import AnthropicClient
    from rag_assets.scoring.embedding import HashingEmbedder
    from rag_assets.scoring.evaluate import evaluate
    from rag_assets.store.engine import get_engine
    from rag_assets.store.llm_cache_repository import SqlLLMCache
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.claude_judge import judge_responder
    from tests.fakes.judge_world import judge_world

    with tempfile.TemporaryDirectory() as scratch:
        engine = get_engine(f"sqlite:///{scratch}/bench.db")
        world = judge_world(engine, args.items)
        items = world.items
        if len(items) < args.items:
            print(f"--items {args.items}: the sample corpus gives {len(items)} distinct items offline; measuring those "
                  "(bench/probe_cost.py builds larger synthetic sets)")
        cache = SqlLLMCache(engine)
        with FakeAnthropicServer(judge_responder, latency=args.latency) as server:
            judge = AnthropicClient("fake-key-for-the-local-fake-server", "claude-sonnet-5-5", base_url=server.base_url,
                                    max_concurrency=args.concurrency)
            rows = []
            for label in ("first run", "unchanged re-run"):
                before = server.count()
                started = time.perf_counter()
                evaluate(items, world.responses, world.versions, world.statements, judge, cache, HashingEmbedder(), 5)
                seconds = time.perf_counter() - started
                calls = server.count() - before
                rows.append((label, calls, calls / len(items), seconds))
    print(f"{len(items)} items, k=5, fake Messages API latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}")
    print(f"{'':<18}{'calls':>7}{'calls/item':>12}{'wall s':>9}")
    for label, calls, per_item, seconds in rows:
        print(f"{label:<18}{calls:>7}{per_item:>12.2f}{seconds:>9.2f}")


if __name__ == "__main__":
    main()
