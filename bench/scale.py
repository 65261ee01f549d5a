"""Benchmark the sharded evaluation at scale: items/s per executor and judge, peak RSS, unchanged re-runs.

    python bench/scale.py ../shared/data/cpp_docs.tar.gz [--items 10000] [--shard-size 1000] [--workers 2]
        [--latency 0.2] [--concurrency 32] [--judges offline,fake] [--executors in_process,multiprocess,celery]

A synthetic golden set of ``items`` items (one factual question per chunk, every n-th chunk of the
corpus, its opening words as the reference) is answered once by the reference system (offline).
Then the evaluation asset scores it with each judge (``offline``: the deterministic heuristics;
``fake``: the real SDK against the project's fake Messages API on 127.0.0.1, answering after
``latency`` seconds) on each executor (in-process; the multiprocess executor with ``workers``
processes; celery on the machine's Redis with a worker of ``workers`` processes that the benchmark
starts and stops). Each run is cold (empty LLM cache) and then repeated unchanged (both judges'
answers come from the LLM cache). Each run is a fresh process, so its peak RSS (the largest of its
processes, workers included) is its own. ``calls`` are requests counted at the fake server, or the
judgments the offline heuristics computed (calls not answered from the cache).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import dagster as dg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PARTITION_TAG = "dagster/partition"
API_KEY = "fake-key-for-the-local-fake-server"
REDIS = "redis://127.0.0.1:6379/0"


def bench_job():
    """The evaluation job with the judge and executor this run's environment names (rebuilt by every worker)."""
    import dagster as dg

    from rag_assets.defs.assets.evaluation import evaluation
    from rag_assets.defs.assets.rag import rag_answers
    from rag_assets.defs.executors import executor_for
    from rag_assets.defs.resources import RESOURCES, LLMResource
    from rag_assets.settings import current_settings

    if os.environ["BENCH_JUDGE"] == "fake":
        llm = LLMResource(provider="anthropic", api_key=dg.EnvVar("ANTHROPIC_API_KEY"),
                          max_concurrency=int(os.environ["BENCH_CONCURRENCY"]))
    else:
        llm = LLMResource(provider="offline")
    executor = {"in_process": dg.in_process_executor, "multiprocess": dg.multiprocess_executor,
                "celery": executor_for(current_settings(), _isolation())}[os.environ["BENCH_EXECUTOR"]]
    job = dg.define_asset_job("bench_evaluation", selection=dg.AssetSelection.assets("evaluation"))
    return dg.Definitions(assets=[rag_answers, evaluation], jobs=[job], resources={**RESOURCES, "llm": llm},
                          executor=executor).resolve_job_def("bench_evaluation")


def _isolation() -> dict:
    prefix = os.environ.get("BENCH_KEY_PREFIX", "")
    return {"broker_transport_options": {"global_keyprefix": prefix},
            "result_backend_transport_options": {"global_keyprefix": prefix}}


def _peak_rss_mb() -> int:
    return round(max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
                 / 1024)


def synthetic_golden(corpus_root: str, items: int, shard_size: int, instance: dg.DagsterInstance,
                     export_dir: Path) -> tuple[str, int, int]:
    """Snapshot the corpus, import the synthetic golden set (one factual question per chunk, every n-th chunk,
    its opening words as the reference), build it (the golden_set asset's use case, statements by the offline
    judge, exports under ``export_dir``) and answer it once with the offline reference system (rag_answers in
    ``instance``); the corpus version, its chunks and the golden items."""
    import dagster as dg

    from rag_assets.app.golden import build_golden_version
    from rag_assets.corpus.models import ChunkerConfig
    from rag_assets.corpus.snapshot import snapshot_corpus
    from rag_assets.defs.assets.rag import rag_answers
    from rag_assets.defs.partitions import corpus_versions
    from rag_assets.defs.resources import RESOURCES, LLMResource
    from rag_assets.evidence.spans import DEFAULT_MIN_OVERLAP
    from rag_assets.golden.models import ExternalItem
    from rag_assets.golden.pinning import PinnedItem

    store, offline = RESOURCES["store"], LLMResource(provider="offline")
    version = snapshot_corpus(corpus_root, ChunkerConfig(), store.corpus()).version_id
    chunks = store.corpus().snapshot_chunks(version)
    picked = chunks[:: max(1, len(chunks) // items)][:items]
    mapped = []
    for index, chunk in enumerate(picked):
        words = chunk.text.split()
        question = f"What does {chunk.title or chunk.path} say about {' '.join(words[:8])}? (#{index})"
        mapped.append(PinnedItem(ExternalItem(f"{index:05d}", question, " ".join(words[:40])), (chunk.ref,), ()))
    store.curation().import_items(mapped, version, "bench", "synthetic", "0" * 64)
    built = build_golden_version(store, version, offline.judge_client, export_dir, DEFAULT_MIN_OVERLAP)
    instance.add_dynamic_partitions(corpus_versions.name, [version])
    dg.materialize([rag_answers], partition_key=version, instance=instance, resources={**RESOURCES, "llm": offline},
                   run_config={"ops": {"rag_answers": {"config": {"shard_size": shard_size}}}})
    return version, len(chunks), len(built.items)


def _setup(corpus_root: str, items: int, shard_size: int) -> dict:
    """The synthetic golden set, answered, timed."""
    import dagster as dg

    started = time.perf_counter()
    version, chunks, golden = synthetic_golden(corpus_root, items, shard_size, dg.DagsterInstance.get(),
                                               Path(os.environ["BENCH_SCRATCH"]) / "golden")
    return {"version": version, "chunks": chunks, "items": golden,
            "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": _peak_rss_mb()}


def _start_worker(scratch: Path, workers: int) -> subprocess.Popen:
    config_dir = scratch / f"celery-{uuid.uuid4().hex[:8]}"
    config_dir.mkdir()
    settings = {"broker_url": REDIS, "result_backend": REDIS, **_isolation()}
    (config_dir / "dagster_celery_config.py").write_text("".join(f"{k} = {v!r}\n" for k, v in settings.items()))
    log = config_dir / "worker.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(config_dir), str(ROOT), str(ROOT / "bench")])}
    with log.open("w") as out:
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker",
                                   "--loglevel=INFO", "--pool=prefork", f"--concurrency={workers}",
                                   "--without-gossip", "--without-mingle", "-n", f"bench-{uuid.uuid4().hex[:8]}@%h"],
                                  cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while " ready." not in log.read_text():
        if worker.poll() is not None or time.monotonic() > deadline:
            _stop(worker)
            raise RuntimeError(f"the celery worker did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)
    return worker


def _stop(worker: subprocess.Popen) -> None:
    """Warm shutdown (SIGTERM: finish the current task), then nothing of its process group is left."""
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=120)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def _run(version: str, executor: str, workers: int, shard_size: int, scratch: Path, forget_kept: bool = False) -> dict:
    """One evaluation run on one executor, timed, in this (fresh) process; with ``forget_kept``, every judge
    shard is judged again (from the LLM cache where it has the answers), as after a judge change that
    keeps the prompts."""
    import dagster as dg

    from rag_assets.defs.resources import RESOURCES

    if forget_kept:
        _clear("judged_shard")

    os.environ["BENCH_EXECUTOR"] = executor
    run_config = {"ops": {"evaluation": {"config": {"shard_size": shard_size, "severity": "WARN"}}}}
    if executor == "multiprocess":
        run_config["execution"] = {"config": {"max_concurrent": workers}}
    worker = None
    try:
        worker = _start_worker(scratch, workers) if executor == "celery" else None
        started = time.perf_counter()
        with dg.execute_job(dg.reconstructable(bench_job), instance=dg.DagsterInstance.get(), run_config=run_config,
                            tags={PARTITION_TAG: version}) as result:
            seconds = time.perf_counter() - started
            if not result.success:
                raise RuntimeError(f"the {executor} run failed")
    finally:
        if worker is not None:
            _stop(worker)
    meta = {k: v.value for k, v in result.asset_materializations_for_node("evaluation")[0].metadata.items()}
    items = meta["items"]
    return {"items": items, "seconds": round(seconds, 2), "items_per_s": round(items / seconds, 1),
            "computed": meta["llm_cache_misses"], "cache_hits": meta["llm_cache_hits"],
            "peak_rss_mb": _peak_rss_mb(), "faithfulness": meta.get("faithfulness")}


def _phase(args: argparse.Namespace, *extra: str) -> dict:
    out = subprocess.run([sys.executable, __file__, str(args.path), "--items", str(args.items), "--shard-size",
                          str(args.shard_size), "--workers", str(args.workers), *extra],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"phase {extra} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _clear(table_name: str) -> None:
    """Empty one of the store's tables (the LLM cache, or the kept judge-shard outcomes)."""
    from sqlalchemy import delete

    from rag_assets.defs.resources import RESOURCES
    from rag_assets.store.engine import write_transaction
    from rag_assets.store.tables import SQLModel

    with write_transaction(RESOURCES["store"].engine()) as conn:
        conn.execute(delete(SQLModel.metadata.tables[table_name]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--shard-size", type=int, default=1_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--judges", default="offline,fake")
    parser.add_argument("--executors", default="in_process,multiprocess,celery")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--version", help=argparse.SUPPRESS)
    parser.add_argument("--forget-kept", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "setup":
        print(json.dumps(_setup(str(args.path), args.items, args.shard_size)))
        return
    if args.phase:
        print(json.dumps(_run(args.version, args.phase, args.workers, args.shard_size, Path(os.environ["BENCH_SCRATCH"]),
                              args.forget_kept)))
        return

    from snapshot import corpus_folder
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.claude_judge import judge_responder

    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        (scratch / "dagster").mkdir()
        os.environ.update({"RAG_ASSETS_HOME": str(scratch / "home"), "DAGSTER_HOME": str(scratch / "dagster"),
                           "RAG_ASSETS_CORPUS_ROOT": str(scratch / "corpus"), "BENCH_SCRATCH": str(scratch),
                           "RAG_ASSETS_CELERY_BROKER": REDIS, "BENCH_KEY_PREFIX": f"bench_{uuid.uuid4().hex[:8]}:",
                           "BENCH_CONCURRENCY": str(args.concurrency)})
        for name in ("RAG_ASSETS_DATABASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            os.environ.pop(name, None)
        corpus = corpus_folder(args.path.resolve(), scratch / "corpus")
        setup = _phase(argparse.Namespace(**{**vars(args), "path": corpus}), "--phase", "setup")
        print(f"setup: {setup['chunks']:,} chunks, {setup['items']:,} golden items answered by the offline reference "
              f"system in {setup['seconds']} s (peak RSS {setup['peak_rss_mb']} MB); shard size {args.shard_size}, "
              f"{args.workers} workers; fake Messages API latency {args.latency * 1000:.0f} ms, "
              f"{args.concurrency} concurrent calls per process", flush=True)
        header = (f"{'judge':<8}{'executor':<14}{'items/s':>9}{'seconds':>9}{'calls':>8}{'peak RSS MB':>13}"
                  f"{'re-run s':>10}{'re-run calls':>14}{'re-run cache hits':>19}")
        print(header, flush=True)
        with FakeAnthropicServer(judge_responder, latency=args.latency) as server:
            os.environ.update({"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": server.base_url})
            for judge in args.judges.split(","):
                os.environ["BENCH_JUDGE"] = judge
                for executor in args.executors.split(","):
                    _clear("llm_cache")
                    runs = []
                    for _ in ("cold", "unchanged re-run"):
                        before = server.count()
                        run = _phase(args, "--phase", executor, "--version", setup["version"])
                        runs.append({**run, "paid": server.count() - before if judge == "fake" else run["computed"]})
                    cold, warm = runs
                    assert cold["faithfulness"] == warm["faithfulness"], "an unchanged re-run scores alike"
                    print(f"{judge:<8}{executor:<14}{cold['items_per_s']:>9}{cold['seconds']:>9}{cold['paid']:>8}"
                          f"{cold['peak_rss_mb']:>13}{warm['seconds']:>10}{warm['paid']:>14}{warm['cache_hits']:>19}",
                          flush=True)


if __name__ == "__main__":
    main()
