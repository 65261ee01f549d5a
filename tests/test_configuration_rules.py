"""Static rules of configuration, read from the source with ``ast``: nothing in the package writes the
environment (an option reaches the code as a value), and only the settings module reads it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "rag_assets"
SETTINGS = PACKAGE / "settings.py"
WRITERS = {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` (a parameter named ``environ`` is a mapping passed in, not the environment)."""
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def environment_uses(source: str) -> Iterator[tuple[int, str]]:
    """(line, "write" or "read") of every use of the process environment in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(t, ast.Subscript) and _is_environ(t.value) for t in targets):
                yield node.lineno, "write"
        elif isinstance(node, ast.Attribute) and node.attr in ("putenv", "unsetenv"):
            yield node.lineno, "write"
        elif isinstance(node, ast.Attribute) and _is_environ(node.value) and node.attr in WRITERS:
            yield node.lineno, "write"
        elif isinstance(node, ast.Attribute) and node.attr in ("getenv", "environb"):
            yield node.lineno, "read"
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and {
                alias.name for alias in node.names} & {"environ", "getenv", "putenv", "environb"}:
            yield node.lineno, "read"
        elif _is_environ(node):
            yield node.lineno, "read"


def _uses(kind: str) -> list[str]:
    return [f"{path.relative_to(PROJECT_ROOT)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
            for line, found in environment_uses(path.read_text(encoding="utf-8")) if found == kind]


def test_the_rule_finds_writes_and_reads():
    source = ("import os\nos.environ['A'] = '1'\nos.environ.setdefault('B', '2')\nos.putenv('C', '3')\n"
              "os.environ.update(D='4')\ndel os.environ['E']\nx = os.getenv('F')\ny = os.environ.get('G')\n"
              "from os import getenv\ndef f(environ):\n    return environ.get('H')\n")
    found = list(environment_uses(source))
    assert {line for line, kind in found if kind == "write"} == {2, 3, 4, 5, 6}
    assert {line for line, kind in found if kind == "read"} >= {7, 8, 9}
    assert all(line < 10 for line, _ in found), "a mapping passed in as a parameter is not the environment"


def test_nothing_in_the_package_writes_the_environment():
    assert _uses("write") == []


def test_only_the_settings_module_reads_the_environment():
    assert {use.rsplit(":", 1)[0] for use in _uses("read")} == {str(SETTINGS.relative_to(PROJECT_ROOT))}
