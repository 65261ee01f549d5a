"""Benchmark: one day's production_sample on a large query log, peak RSS and time.

    python bench/production_log.py [--mb 1024] [--days 30] [--dir DIR]

Writes a log of ``--mb`` megabytes (one file, ``--days`` days of traffic in time order, about 1.1 KB a
served query with three retrieved chunks; deterministic) into ``--dir`` or a temporary folder, then
materializes ``production_sample`` (the real asset: offline judge, store and cache in a temporary home)
for a day in the middle of the log, twice, each in a fresh process:

* first day: the folder is not indexed yet, so the run streams the whole file once into the day
  index beside it (``rag_assets.production.logs``), then reads its day;
* another day: the index is there, the run reads only that day's byte ranges.

Each prints its wall time and peak RSS (``ru_maxrss`` of the process; the RSS after importing the
project and Dagster is printed beside it, as the floor any run pays). Target: peak RSS <= 300 MB for a
day of a 1 GB log.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RSS_TARGET_MB = 300
FIRST_DAY = date(2026, 3, 1)
WORDS = ("sync conflict token rotate key folder device share quota storage retry webhook export import backup "
         "restore policy admin audit invite member plan billing limit error timeout cache index upload").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def write_log(path: Path, megabytes: int, days: int) -> int:
    """A deterministic log of about ``megabytes`` MB over ``days`` days; the number of records written."""
    rng = random.Random(17)
    chunks = [{"chunk_id": f"doc-{i // 8}#c{i % 8}", "text": _text(rng, 40)} for i in range(2000)]
    questions = [_text(rng, 12) + "?" for _ in range(5000)]
    target, written, count = megabytes * 1024 * 1024, 0, 0
    per_record = 1100
    total = target // per_record
    start = datetime.combine(FIRST_DAY, datetime.min.time(), tzinfo=timezone.utc)
    step = timedelta(days=days) / max(total, 1)
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            retrieved = [{**rng.choice(chunks), "score": round(rng.uniform(1, 20), 2)} for _ in range(3)]
            line = json.dumps({
                "query_id": f"q{count:09d}", "timestamp": (start + step * count).isoformat().replace("+00:00", "Z"),
                "question": rng.choice(questions), "answer": retrieved[0]["text"][:200], "retrieved": retrieved,
                "citations": [{"claim": retrieved[0]["text"][:60], "chunk_id": retrieved[0]["chunk_id"]}],
                "system_id": "prod"}) + "\n"
            out.write(line)
            written += len(line)
            count += 1
    return count


def score_day(folder: Path, day: str) -> None:
    """In this process: materialize production_sample for ``day`` and print time and RSS."""
    import dagster as dg

    from rag_assets.defs.assets.production import production_sample
    from rag_assets.defs.resources import RESOURCES

    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    with dg.instance_for_test() as instance:
        result = dg.materialize([production_sample], partition_key=day, resources=RESOURCES, instance=instance,
                                raise_on_error=False)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    records = next((e.step_materialization_data.materialization.metadata["records"].value
                    for e in result.get_asset_materialization_events()), None)
    print(json.dumps({"day": day, "success": result.success, "records": records, "seconds": round(seconds, 1),
                      "peak_rss_mb": round(peak), "rss_after_imports_mb": round(floor)}))


def _run(folder: Path, day: str, home: Path) -> dict:
    env = {**os.environ, "RAG_ASSETS_HOME": str(home), "RAG_ASSETS_PRODUCTION_LOGS": str(folder),
           "RAG_ASSETS_PRODUCTION_START": FIRST_DAY.isoformat()}
    done = subprocess.run([sys.executable, __file__, "--score", str(folder), day], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024, help="size of the log in MB (default 1024)")
    parser.add_argument("--days", type=int, default=30, help="days of traffic in the log (default 30)")
    parser.add_argument("--dir", help="where to write the log (default: a temporary folder, removed afterwards)")
    parser.add_argument("--score", nargs=2, metavar=("FOLDER", "DAY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.score:
        score_day(Path(args.score[0]), args.score[1])
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.dir) if args.dir else Path(scratch) / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "served.jsonl"
        started = time.perf_counter()
        count = write_log(log, args.mb, args.days)
        print(f"log: {log} {log.stat().st_size / 1e6:,.0f} MB, {count:,} records over {args.days} days "
              f"(written in {time.perf_counter() - started:.0f} s)")
        middle = FIRST_DAY + timedelta(days=args.days // 2)
        days = (("first day (indexes the log)", middle), ("another day (index kept)", middle + timedelta(days=1)))
        for label, day in days:
            figures = _run(folder, day.isoformat(), Path(scratch) / "home")
            verdict = "ok" if figures["peak_rss_mb"] <= RSS_TARGET_MB else "OVER"
            print(f"{label:<30} {figures['day']}  records={figures['records']:,}  {figures['seconds']:>7.1f} s  "
                  f"peak RSS {figures['peak_rss_mb']:>5} MB (after imports {figures['rss_after_imports_mb']} MB; "
                  f"target {RSS_TARGET_MB} MB: {verdict})  success={figures['success']}")


if __name__ == "__main__":
    main()
