"""Per-metric minimums: named profiles, or the user's own file (YAML or JSON: ``{metric: minimum}``).

The profiles follow the design sources: ``general`` for a typical internal assistant,
``high_stakes`` where a wrong answer costs (legal, medical, finance), ``developer`` while a system
is being built. They are calibrated for a model as judge. ``offline`` is the offline judge's own
scale: the offline reference system on the sample corpus, a margin below its measured level
(faithfulness 0.99, answer relevance 0.39, context precision 0.40, context recall 0.79, decline
accuracy 1.0, hit rate 0.83, with the lexical offline judge of docs/judge.md; its context precision
is graded per chunk and weighs how much of a chunk bears on the question, so a chunk of several
sentences of which one answers grades lower: 0.51 before that reading, 0.77 with the former yes/no
verdicts, and the minimum follows the scale, 0.30). These minimums guard the
pipeline, not answer quality. ``auto``
(the default) is ``general`` with a model judge and ``offline`` with the offline one. Metrics a
profile does not name are reported without a gate. Each metric's module states its minimum in each
profile (``Metric.thresholds``); a profile is read from the registry.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rag_assets.errors import ConfigError
from rag_assets.scoring.aggregate import Aggregate
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.metrics.registry import DEFAULT_K, PROFILES

AUTO = "auto"
EXAMPLE_LINE = "faithfulness: 0.85"
#: The source a ``{metric: minimum}`` mapping given in Python is named by in a refusal.
GIVEN = "the given thresholds"


def resolve_profile(profile: str, judge_is_offline: bool) -> str:
    return ("offline" if judge_is_offline else "general") if profile == AUTO else profile


class _Duplicate(ValueError):
    """A key given twice in one mapping of the file; ``line`` and ``first`` count from 1 (None: not found)."""

    def __init__(self, key: str, line: int | None, first: int | None) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader the corpus uses, refusing a key given twice: PyYAML keeps the last one, so
    ``faithfulness: 0.9`` then ``faithfulness: 0.5`` would gate at 0.5 without a word."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        lines: dict[str, int] = {}
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in lines:
                    raise _Duplicate(key.value, key.start_mark.line + 1, lines[key.value])
                lines[key.value] = key.start_mark.line + 1
        return super().construct_mapping(node, deep)


def _unique_pairs(text: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """A JSON ``object_pairs_hook`` refusing a key given twice (``json`` keeps the last), with the lines of the
    key's first two appearances as written (None when the key is written with escapes)."""
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                found = [text.count("\n", 0, m.start()) + 1
                         for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
                raise _Duplicate(key, *(found[1], found[0]) if len(found) > 1 else (None, None))
            seen.add(key)
        return dict(pairs)
    return build


def _read(file: Path) -> object:
    """The file's content: JSON for a .json file, YAML otherwise; a key given twice is refused."""
    try:
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".json":
            return json.loads(text, object_pairs_hook=_unique_pairs(text)) if text.strip() else None
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except _Duplicate as twice:
        where = f", line {twice.line}" if twice.line else ""
        first = f" (first on line {twice.first})" if twice.first else ""
        raise ConfigError(f"thresholds file {file}{where}, field {twice.key}: given twice{first}; keep one") from twice
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f", line {mark.line + 1}" if mark else ""
        raise ConfigError(f"thresholds file {file}{where}: not YAML: {exc.problem or exc.context}") from exc
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"thresholds file {file}: cannot be read: {exc}") from exc


def check_metric_name(metric: object, source: str, k: int = DEFAULT_K,
                      production: Sequence[str] | None = None) -> None:
    """Refuses a name that is not a metric at ``k`` (or, given ``production``, not one of those production metrics:
    the others are never scored there), in one line naming ``source``, the name, the closest metric and every
    metric: a misspelt name in a mapping keyed by metric (thresholds, allowed drops) is otherwise passed over
    without a word."""
    known = REGISTRY.names(k=k) if production is None else list(production)
    if metric not in known:
        close = difflib.get_close_matches(str(metric).lower(), known, n=1)
        guess = f" (did you mean {close[0]}?)" if close else ""
        kind, which = ("metric", f"the metrics at k={k}") if production is None else (
            "production metric", "the production metrics")
        raise ConfigError(f"{source}, field {metric}: not a {kind}{guess}; {which}: {', '.join(known)}")


def checked_thresholds(data: object, source: str, k: int = DEFAULT_K) -> dict[str, float]:
    """``data`` as minimums, or the one-line refusal naming ``source``, the field and what to write instead.

    The one check of every way in: a thresholds file on the CLI, in the evaluation asset's config or an
    instance's ``thresholds_file``, and a file or mapping given to the Python API. It refuses what would gate
    something other than the user meant: nothing at all (an empty file or ``{}``: every check would pass with
    no gate, where the default profile fails), a name that is not a metric at ``k`` (it would fail as
    unmeasured after the whole run, or pass a misspelt gate never meant), a minimum outside [0, 1]."""
    if data is None or data == {}:
        raise ConfigError(f"{source}: sets no metric, so it would gate nothing; for example '{EXAMPLE_LINE}'")
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping of metric to minimum, for example '{EXAMPLE_LINE}'")
    for metric, value in data.items():
        check_metric_name(metric, source, k)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ConfigError(f"{source}, field {metric}: expected a number in [0, 1], got {value!r}")
    return {str(metric): float(value) for metric, value in data.items()}


def load_thresholds(profile: str, path: str | None = None, k: int = DEFAULT_K) -> dict[str, float]:
    """The minimums of a thresholds file (as written, checked at ``k``), or of a profile with its @k metrics at
    ``k``."""
    if path:
        return checked_thresholds(_read(Path(path)), f"thresholds file {path}", k)
    if profile not in PROFILES:
        raise ConfigError(f"threshold profile must be one of {', '.join([AUTO, *PROFILES])}, got {profile!r}")
    return REGISTRY.profile(profile, k)


@dataclass(frozen=True)
class ThresholdResult:
    metric: str
    mean: float | None
    minimum: float
    passed: bool
    applicable: bool = True  # False: no item of the evaluation is one the metric scores; it passes, ungated

    @property
    def status(self) -> str:
        return "not applicable" if not self.applicable else "pass" if self.passed else "FAIL"


def applies(metric: str, aggregate: Aggregate | None, question_types: Collection[str]) -> bool:
    """Whether ``metric`` is one the evaluation's items (of ``question_types``, errored ones included) call for:
    the question types it scores (``Metric.items``; an adversarial item is judged on declining, the others on
    answering and on their evidence); a metric that scores only where the data has it (citations, document
    versions: ``Metric.only_where_data``) applies where it produced a value or a failure. A name the registry
    does not know is taken to score the answerable items."""
    if aggregate is None or aggregate.n > 0 or aggregate.failures > 0:
        return True  # measured, failed, or a name the evaluation never computed: gated (the last fails)
    found = REGISTRY.find(metric)
    if found is None:
        return any(t != "adversarial" for t in question_types)
    return not found.only_where_data and found.called_for(question_types)


def check_thresholds(aggregates: Mapping[str, Aggregate], thresholds: Mapping[str, float],
                     question_types: Collection[str]) -> list[ThresholdResult]:
    """Each minimum against its metric's mean, over an evaluation whose items have ``question_types``. A metric
    with no value fails its minimum when the items call for it (every judge call or RAG answer for it failed);
    when none does (decline accuracy on a set without adversarial questions) it is not applicable: reported
    so, never a failed gate."""
    results = []
    for metric, minimum in thresholds.items():
        found = aggregates.get(metric)
        mean = found.mean if found else None
        applicable = applies(metric, found, question_types)
        results.append(ThresholdResult(metric, mean, minimum, not applicable or (mean is not None and mean >= minimum),
                                       applicable))
    return results
