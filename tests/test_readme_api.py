"""The documented Python API example (docs/python-api.md) runs as printed and its test passes."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "python-api.md"


def readme_example() -> str:
    """The page's first python block."""
    return re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL).group(1)


def test_the_readme_example_scores_the_item_writes_the_report_and_its_test_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code = readme_example()
    assert 12 <= len(code.splitlines()) <= 20, "a ~15-line example"
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, str(PAGE), "exec"), namespace)
    frame = namespace["frame"]
    assert len(frame) == 1 and (frame["recall@5"][0], frame["faithfulness"][0]) == (1.0, 1.0)
    assert not math.isnan(frame["answer_relevance"][0]) and frame["rag_error"][0] is None
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count('<details class="item"') == 1
    namespace["test_rag_quality"]()
