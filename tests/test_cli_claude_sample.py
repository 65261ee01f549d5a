"""``export ANTHROPIC_API_KEY; rag-assets run`` on the bundled sample corpus (docs/claude.md): Claude writes other
candidates than the offline generator whose candidates the bundled simulated review decides, so the run has the
same simulated expert decide Claude's candidates instead (it failed: "unknown candidate id 'q-0317a50cd2a1'")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.fakes.claude_judge import judge_responder

KEY = "claude-sample-placeholder-credential-0123"
VERSION = "cv-4f76775b215c"
BUNDLED = PROJECT_ROOT / "data" / "curation" / "sample" / f"review-{VERSION}.csv"


def _on_topic_judge(body: dict) -> Reply:
    """The Claude-like responder of every prompt, except that each answer's statements all address the question
    (its aside would hold answer relevance at 0.5, below the general profile's gate, failing the run for that)."""
    reply = judge_responder(body)
    if body["tool_choice"]["name"] == "record_judge_answer_relevance":
        statements = [s for s in reply.tool_input["statements"] if s["addresses_question"]]
        return Reply(tool_input={**reply.tool_input, "statements": statements})
    return reply


def test_run_with_a_key_has_the_simulated_expert_review_claudes_candidates(checkout: Path):
    """Through the CLI in a process of its own, as docs/claude.md says, and once more: with the key's judge and
    generator the second run finds everything up to date and pays for nothing, and the expert has nothing left to
    decide (its review of an empty queue was rejected, failing the run; tests/app/test_review_simulation.py shows
    that case alone). --no-production keeps it short (the production days are scored after the lifecycle, which is
    what this is about)."""
    with FakeAnthropicServer(_on_topic_judge) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}

        def run_cli() -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "rag_assets.cli", "run", "--no-production"], env=env,
                                  cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)

        run = run_cli()
        assert server.requests and not server.errors
        sent = server.count()
        again = run_cli()
        assert server.count() == sent, "the second run sent nothing"
    assert run.returncode == 0, run.stdout + run.stderr
    simulated = checkout / "simulated" / BUNDLED.name
    assert (f"simulated expert review (of this run's candidates: the bundled one reviews other candidates): "
            f"{simulated} -> {checkout / 'inbox' / BUNDLED.name}") in run.stdout
    assert "llm=anthropic / claude-sonnet-5-5" in run.stdout
    assert "files_applied=1, files_rejected=0, decisions=60" in run.stdout
    assert "golden_version=1, items=58, added=58" in run.stdout
    golden = Path(os.environ["RAG_ASSETS_HOME"]) / "golden" / VERSION / "golden-v1.jsonl"
    assert len([json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]) == 58
    assert (checkout / "sample" / BUNDLED.name).read_bytes() == BUNDLED.read_bytes(), "the bundled review is kept"
    assert again.returncode == 0, again.stdout + again.stderr
    assert "simulated expert review" not in again.stdout, "every candidate is decided: nothing left to review"
    assert f"nothing to run for corpus version {VERSION}" in again.stdout
    assert KEY not in run.stdout + run.stderr + again.stdout + again.stderr
