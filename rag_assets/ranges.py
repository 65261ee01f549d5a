"""The ranges of the numeric settings a user gives in several places, one function per rule.

A setting reaches the code through an asset's run config, a resource's config, an instance's defs.yaml and
the Python API; each way in calls the rule here before anything runs, so a bad value is refused the same way
everywhere: one line naming the setting, the value given and an example, as ``ConfigError`` (the CLI exits 2
on it, a Dagster step fails with it as its description). Without these, ``alpha: 0`` switched the regression
gate off and ``k: 0`` failed as a ``ZeroDivisionError`` after the answers were paid for (tester)."""

from __future__ import annotations

from numbers import Integral, Real

from rag_assets.errors import ConfigError


def _number(value: object, kind: type = Real) -> bool:
    """A number of ``kind`` (``numbers.Real`` or ``Integral``, so numpy's count too: a k read from an array); a bool
    is none here: ``True`` is no alpha."""
    return isinstance(value, kind) and not isinstance(value, bool)


def _refused(name: str, value: object, expected: str, example: object, kind: type = Real) -> ConfigError:
    """The one-line refusal; a number of ``kind`` shown with ``g`` (``0`` for the ``0.0`` a config's float field
    reads ``0`` as), anything else with ``repr``: a k of ``5.0`` shown as ``5`` read as a valid value refused."""
    shown = f"{value:g}" if _number(value, kind) else repr(value)
    return ConfigError(f"{name} must be {expected}, got {shown}; for example {name}: {example}")


def at_least_one(name: str, value: int, example: int) -> int:
    """``value`` when it is a whole number of at least 1 (k, a concurrency); else the one-line refusal."""
    if not _number(value, Integral) or value < 1:
        raise _refused(name, value, "a whole number of at least 1", example, Integral)
    return value


def above_zero(name: str, value: float, example: float) -> float:
    """``value`` when it is a number above 0 (a timeout); else the one-line refusal."""
    if not _number(value) or not value > 0:
        raise _refused(name, value, "a number above 0", example)
    return value


def share(name: str, value: float, example: float) -> float:
    """``value`` when it is a share of items in [0, 1] (a failure or error budget); else the one-line refusal."""
    if not _number(value) or not 0 <= value <= 1:
        raise _refused(name, value, "in [0, 1]", example)
    return value


def significance_level(name: str, value: float, example: float) -> float:
    """``value`` when it lies strictly between 0 and 1 (a test's alpha: at 0 no p-value is below it, so nothing
    is ever significant, and at 1 everything is); else the one-line refusal."""
    if not _number(value) or not 0 < value < 1:
        raise _refused(name, value, "between 0 and 1, both excluded", example)
    return value
