"""examples/two_products from a fresh clone: the commands its README gives, run as given, except that the
long-running ``dagster dev`` is ``dagster definitions validate`` (same workspace, same DAGSTER_HOME, same code
location load; no server to start and stop)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT

EXAMPLE = PROJECT_ROOT / "examples" / "two_products"


def readme_commands() -> list[str]:
    """The README's shell block: its indented lines."""
    lines = (EXAMPLE / "README.md").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.startswith("    ") and line.strip()]


def test_the_readme_gives_the_folder_dagster_home_needs_before_dagster_dev():
    assert readme_commands() == ["cd examples/two_products", "mkdir -p .dagster",
                                 "DAGSTER_HOME=$PWD/.dagster dagster dev -w workspace.yaml"]


def test_the_readmes_commands_load_both_instances_from_a_fresh_clone(tmp_path: Path):
    clone = tmp_path / "clone"  # what a clone has: the example (no .dagster) and the sample corpus it reads
    shutil.copytree(EXAMPLE, clone / "examples" / "two_products",
                    ignore=shutil.ignore_patterns(".dagster", "__pycache__", ".rag_assets"))
    shutil.copytree(PROJECT_ROOT / "data" / "corpus", clone / "data" / "corpus")
    script = " && ".join(command.replace("dagster dev", "dagster definitions validate")
                         for command in readme_commands())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "RAG_ASSETS_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run(["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Validation successful for code location two_products." in done.stdout + done.stderr
    assert (clone / "examples" / "two_products" / ".dagster").is_dir()
