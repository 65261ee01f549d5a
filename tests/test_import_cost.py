"""Loading the code location imports none of the heavy libraries only some paths need."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("great_expectations", "scipy", "scipy.stats", "pandas", "altair", "vl_convert")


def test_importing_the_definitions_loads_no_heavy_module():
    code = f"import json, sys, rag_assets.definitions; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
