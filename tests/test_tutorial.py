"""The tutorial (docs/tutorial.md), run as printed: every ``rag-assets`` command of the page, in order, on a
corpus the project has never seen, with the reader's own RAG system. Only the paths change: ``~/my-docs`` is
the test's corpus and ``data/curation`` the test's curation folder."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.settings import Settings
from tests.conftest import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "tutorial.md"
MY_RAG = '''from rag_assets.examples.callable_system import answer as _answer


def answer(request):
    return _answer(request)
'''


def tutorial_commands() -> list[str]:
    """The page's ``rag-assets`` command lines, in order."""
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    return [line for block in blocks for line in block.splitlines() if line.startswith(".venv/bin/rag-assets ")]


def test_the_tutorial_runs_as_printed_on_a_new_corpus(project_env: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    corpus = tmp_path / "my-docs"
    corpus.mkdir()
    for page in sorted((PROJECT_ROOT / "data" / "corpus").rglob("*.md"))[:6]:
        shutil.copyfile(page, corpus / page.name)
    (tmp_path / "my_rag.py").write_text(MY_RAG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    curation = Settings.from_env().curation_root
    commands = tutorial_commands()
    assert [c.split()[1] for c in commands] == ["run", "simulate-review", "run", "run", "status"]
    outputs = []
    for command in commands:
        command = command.replace("~/my-docs", str(corpus)).replace("data/curation", str(curation))
        assert main(shlex.split(command)[1:]) == 0, command
        outputs.append(capsys.readouterr().out)
    first, _, scored, own, status = outputs
    assert "next step: nobody has reviewed corpus version" in first and "golden_set" not in first
    assert re.search(r"^golden_set +cv-\w+ +golden_version=1, items=[1-9]", scored, re.M)
    assert re.search(r"^evaluation +cv-\w+ +faithfulness=", scored, re.M)
    assert re.search(r"^rag_answers +cv-\w+ +system=my_rag:answer, answered=[1-9]\d*, errors=0", own, re.M)
    assert "golden versions (1):" in status and "evaluations (newest 2):" in status
