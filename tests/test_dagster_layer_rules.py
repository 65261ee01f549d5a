"""Static rules of the thin Dagster layer, read from the source with ``ast``: a function Dagster runs (an asset,
check, sensor, schedule, op or sharded step) only gathers its inputs, calls a use case and shapes the outcome,
so its body stays short; and no function has its ``__signature__`` rewritten (resources are read by the
instance's keys through ``Lifecycle.services``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.conftest import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "rag_assets"
MAX_BODY_LINES = 30
#: Decorators that make a function something Dagster runs (``dg.asset(...)``, ``@asset``, the project's ``@step``).
DAGSTER_DECORATORS = {"asset", "multi_asset", "graph_asset", "asset_check", "multi_asset_check", "sensor",
                      "asset_sensor", "multi_asset_sensor", "run_status_sensor", "run_failure_sensor", "schedule",
                      "op", "graph", "job", "step"}


def _decorator_name(node: ast.expr) -> str | None:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else None


def body_lines(fn: ast.FunctionDef) -> int:
    """Lines of ``fn``'s body without its docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def long_dagster_bodies(source: str, name: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                _decorator_name(d) in DAGSTER_DECORATORS for d in node.decorator_list):
            lines = body_lines(node)
            if lines > MAX_BODY_LINES:
                yield f"{name}:{node.lineno} {node.name}: {lines} lines"


def signature_assignments(source: str, name: str) -> Iterator[str]:
    """Assignments to ``x.__signature__`` and ``setattr(x, "__signature__", ...)``."""
    for node in ast.walk(ast.parse(source)):
        targets = (node.targets if isinstance(node, ast.Assign) else [node.target]
                   if isinstance(node, ast.AnnAssign | ast.AugAssign) else [])
        if any(isinstance(t, ast.Attribute) and t.attr == "__signature__" for t in targets):
            yield f"{name}:{node.lineno}"
        if isinstance(node, ast.Call) and _decorator_name(node) == "setattr" and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value == "__signature__":
            yield f"{name}:{node.lineno}"


def _sources() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.read_text(encoding="utf-8"), str(path.relative_to(PROJECT_ROOT))


PLANTED = '''
import dagster as dg

@dg.asset(key_prefix=["x"])
def long_asset(context):
    """A docstring is not counted."""
''' + "".join(f"    a{i} = {i}\n" for i in range(31)) + '''

@step(pool="p")
def short_step(context):
''' + "".join(f"    b{i} = {i}\n" for i in range(30)) + '''

def plain(context):
''' + "".join(f"    c{i} = {i}\n" for i in range(40)) + '''

def rename(fn):
    fn.__signature__ = None
    setattr(fn, "__signature__", None)
'''


def test_the_rules_find_what_is_planted_and_only_that():
    assert list(long_dagster_bodies(PLANTED, "planted.py")) == ["planted.py:5 long_asset: 31 lines"]
    renames = [number for number, line in enumerate(PLANTED.splitlines(), 1) if "__signature__" in line]
    assert len(renames) == 2
    assert list(signature_assignments(PLANTED, "planted.py")) == [f"planted.py:{n}" for n in renames]


def test_every_dagster_body_is_at_most_30_lines():
    assert [found for source, name in _sources() for found in long_dagster_bodies(source, name)] == []


def test_nothing_rewrites_a_signature():
    assert [found for source, name in _sources() for found in signature_assignments(source, name)] == []
