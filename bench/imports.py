"""Benchmark: the CPU cost of loading the code location, and which heavy modules it pulls in.

    python bench/imports.py [--runs 5]

Each run is a fresh interpreter that times ``import rag_assets.definitions`` from inside (its
start-up is not counted); the minimum is reported, since the machine is shared. The heavy
modules listed are the ones only some paths need (validation, drift, report charts).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

HEAVY = ("great_expectations", "scipy.stats", "pandas", "altair", "vl_convert", "dagster.components")

_CHILD = f"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
started, wall = cpu(), time.perf_counter()
import rag_assets.definitions
print(json.dumps({{"cpu": cpu() - started, "wall": time.perf_counter() - wall,
                  "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CHILD], check=True, capture_output=True,
                                      text=True).stdout.strip().splitlines()[-1]) for _ in range(args.runs)]
    print(f"import rag_assets.definitions: {min(r['cpu'] for r in runs):.2f} s CPU, "
          f"{min(r['wall'] for r in runs):.2f} s wall (min of {args.runs} fresh interpreters)")
    print(f"heavy modules loaded: {', '.join(runs[0]['heavy']) or 'none'}")


if __name__ == "__main__":
    main()
