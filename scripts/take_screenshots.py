"""Retake the pictures in docs/ from a real run, with headless Chromium (no browser download).

Run ``rag-assets run`` first (the pictures show what that run made), then::

    .venv/bin/python scripts/take_screenshots.py

It starts ``dagster-webserver`` (not ``dagster dev``: no daemon, so no sensor starts a run while the
pictures are taken) on the DAGSTER_HOME the CLI used, waits for it, and saves the asset graph with
every group, the evaluation asset's page and the newest HTML report. Chromium is Debian's
``chromium`` package, as in .ci/run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from rag_assets.cli.commands import ui_command
from rag_assets.settings import Settings

DOCS = Path(__file__).resolve().parents[1] / "docs"
WINDOW = "1600,1000"
#: The Dagster UI is a JavaScript application: Chromium renders after this much (virtual) time.
RENDER_MS = 20_000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(url: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"the webserver did not answer at {url} within {seconds:.0f} s")


def _graphql(base: str, query: str) -> dict:
    request = urllib.request.Request(f"{base}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["data"]


def _graph_url(base: str) -> str:
    """The global lineage with every group open (the UI keeps open groups in the ``expanded`` query)."""
    groups = sorted({node["groupName"] for node in _graphql(base, "{ assetNodes { groupName } }")["assetNodes"]})
    expanded = ",".join(f"global@global:{group}" for group in groups)
    return f"{base}/asset-groups?{urllib.parse.urlencode({'expanded': expanded})}"


def _shoot(browser: str, url: str, target: Path) -> None:
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={WINDOW}", f"--virtual-time-budget={RENDER_MS}", f"--screenshot={target}", url],
                   check=True, capture_output=True, timeout=180)
    print(f"wrote {target}")


def _newest_report(settings: Settings) -> Path:
    reports = sorted((settings.home / "reports").glob("**/*.html"), key=lambda path: path.stat().st_mtime)
    if not reports:
        raise SystemExit(f"no HTML report under {settings.home / 'reports'}: run `rag-assets run` first")
    return reports[-1]


def main() -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("Chromium is not installed (apt-get install chromium)")
    settings = Settings.from_env()
    command, env = ui_command(settings)
    port = _free_port()
    webserver = [str(Path(command[0]).with_name("dagster-webserver")), *command[2:], "-h", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(webserver, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(f"{base}/server_info")
        _graphql(base, "mutation { setNuxSeen }")  # the community sign-up dialog would cover the pictures
        _shoot(browser, _graph_url(base), DOCS / "asset-graph.png")
        _shoot(browser, f"{base}/assets/evaluation", DOCS / "evaluation-asset.png")
        _shoot(browser, _newest_report(settings).as_uri(), DOCS / "report-example.png")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    sys.exit(main())
