"""The dependency lock, constraints.txt: the tests run on exactly what it pins, it pins everything that
`pip install -e '.[dev]'` brings, every pin lies inside pyproject.toml's ranges, and both README commands
and .ci/run install with it."""

from __future__ import annotations

import re
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import PROJECT_ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs 3.11
    import tomli as tomllib

LOCK = PROJECT_ROOT / "constraints.txt"
REFRESH = "bash scripts/lock-dependencies"
UNPINNED = {"pip", "rag-assets"}  # the installer itself, and the project (installed editable)


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def dev_requirements() -> list[Requirement]:
    """Every requirement that `.[dev]` installs directly: the dependencies and the extras dev names."""
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted, requirements = ["dev"], [Requirement(r) for r in project["dependencies"]]
    while wanted:
        for text in extras[wanted.pop()]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == "rag-assets":
                wanted.extend(requirement.extras)
            else:
                requirements.append(requirement)
    return requirements


def test_the_tests_run_on_exactly_the_locked_versions():
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    wrong = {name: (installed.get(name), pin) for name, pin in locked().items() if installed.get(name) != pin}
    assert not wrong, f"installed vs locked {wrong}: install with `pip install -c constraints.txt -e '.[dev]'`"
    unlocked = set(installed) - set(locked()) - UNPINNED
    assert not unlocked, f"installed but not in constraints.txt: {sorted(unlocked)}; refresh it: {REFRESH}"


def test_every_direct_requirement_is_pinned_inside_its_pyproject_range():
    pins = locked()
    for requirement in dev_requirements():
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin is not None, f"{requirement} is not in constraints.txt; refresh it: {REFRESH}"
        assert requirement.specifier.contains(pin, prereleases=True), f"{requirement.name}=={pin} is outside {requirement}"


def test_the_lock_names_how_to_refresh_it_and_pins_nothing_loosely():
    text = LOCK.read_text(encoding="utf-8")
    assert REFRESH in text
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-!]+", line)
               for line in text.splitlines() if line and not line.startswith("#"))


def test_both_readme_commands_and_ci_install_with_the_lock():
    readme, ci = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8"), (PROJECT_ROOT / ".ci" / "run").read_text()
    install = "pip install -c constraints.txt -e"
    run, tests = (f".venv/bin/{install} . && .venv/bin/rag-assets run",
                  f".venv/bin/{install} '.[dev]' && .venv/bin/python -m pytest")
    assert f"python3 -m venv .venv && {run}" in readme
    assert f"python3 -m venv .venv && {tests}" in readme and tests in ci
