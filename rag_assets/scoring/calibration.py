"""Check a judge against labelled answers: ``rag-assets calibrate FILE``.

The file is JSONL, one answer per line: ``question``, ``answer``, ``contexts`` (strings, or objects with
``text`` and optionally ``chunk_id`` and ``version``), optionally ``reference``, and per judge metric
(faithfulness, answer_relevance, context_precision, context_recall) either a label ``0`` or ``1``, or
``{"pair": "<id>", "label": "good" | "bad"}`` (two answers to one question, one better than the other).
Other fields are kept out of the way, except one spelt like a metric (``faithfullness``: a label that would be
lost); an answer labelled twice on one metric (an exact duplicate line, or the same answer in one pair twice) is
a bad row, as is a label that is not the integer 0 or 1 (``1.0``, ``true``). The judge scores every answer through :func:`judge_cases` (the
evaluation asset's path), and each metric gets its agreement with the labels (see ``agreement``), beside
the "longer answer wins" baseline for pairs, and Cohen's kappa for labels. A file with any bad row is rejected whole, every problem
named by line and field, before anything is judged.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_assets.errors import ConfigError
from rag_assets.llm.cache import LLMCache
from rag_assets.llm.client import LLMClient
from rag_assets.scoring.agreement import Agreement, label_agreement, paired_agreement
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.single import Case, as_chunks, judge_cases
from rag_assets.text.control import control_character_problem



def _reviewed() -> tuple[str, ...]:
    """The metrics a labelled row may label: the judge's own verdicts (see ``Registry.reviewed``)."""
    return tuple(m.name for m in REGISTRY.reviewed())


#: The fields of a labelled row besides its labels.
_FIELDS = frozenset({"question", "answer", "contexts", "reference"})


@dataclass(frozen=True)
class Labelled:
    line: int
    case: Case
    labels: dict[str, int]                 # metric -> 0/1
    pairs: dict[str, tuple[str, bool]]     # metric -> (pair id, is the good one)


def _problems_of(row: Any) -> list[str]:
    if not isinstance(row, dict):
        return ["the line is not a JSON object"]
    problems = []
    if not isinstance(row.get("question"), str) or not row["question"].strip():
        problems.append("question: a non-empty string is required")
    if not isinstance(row.get("answer"), str):
        problems.append("answer: a string is required")
    contexts = row.get("contexts")
    if not isinstance(contexts, list) or not all(
            isinstance(c, str) or (isinstance(c, dict) and isinstance(c.get("text"), str)) for c in contexts):
        problems.append("contexts: a list of strings or of objects with a 'text' string is required")
    else:
        try:
            as_chunks(contexts)
        except ConfigError as exc:
            problems.append(f"contexts: {exc}")
    if row.get("reference") is not None and not isinstance(row["reference"], str):
        problems.append("reference: a string or null is required")
    texts = [("question", row.get("question")), ("answer", row.get("answer")), ("reference", row.get("reference")),
             *((f"contexts[{n}]", c.get("text") if isinstance(c, dict) else c)
               for n, c in enumerate(contexts if isinstance(contexts, list) else []))]
    problems += [f"{field}: {problem}" for field, text in texts
                 if isinstance(text, str) and (problem := control_character_problem(text))]
    problems.extend(_misspelt_labels(row))
    metrics = [m for m in _reviewed() if m in row]
    if not metrics:
        problems.append(f"no label: give at least one of {', '.join(_reviewed())}")
    for metric in metrics:
        value = row[metric]
        pair = isinstance(value, dict) and isinstance(value.get("pair"), str) and value["pair"] and \
            value.get("label") in ("good", "bad")
        if not pair and (type(value) is not int or value not in (0, 1)):  # not True, not 1.0
            problems.append(f"{metric}: 0, 1 or {{\"pair\": \"<id>\", \"label\": \"good\" | \"bad\"}} is required, "
                            f"got {value!r}")
    if "context_recall" in row and not isinstance(row.get("reference"), str):
        problems.append("context_recall: a label needs a reference answer")
    return problems


#: how many letters a misspelt metric name may have more or fewer than the metric's
MISSPELT_LENGTH = 2


def _misspelt_labels(row: Mapping[str, Any]) -> list[str]:
    """A field that is no metric but is spelt like one (``faithfullness``, ``Faithfulness``): a label that would
    be ignored. Other fields (an id, a source, ``faithfulness_score``, ragas' ``context_entity_recall``) are kept
    out of the way: a misspelling is a close match of about a metric's length (two letters more or fewer)."""
    problems = []
    for key in row:
        if key in _FIELDS or key in _reviewed():
            continue
        close = [m for m in difflib.get_close_matches(key.lower(), _reviewed(), n=1, cutoff=0.8)
                 if abs(len(m) - len(key)) <= MISSPELT_LENGTH]
        if close:
            problems.append(f"{key}: not a metric; did you mean {close[0]}? (labels: {', '.join(_reviewed())})")
    return problems


def _duplicates(rows: Sequence[tuple[int, dict[str, Any]]]) -> list[tuple[int, str]]:
    """(line, problem) for each label given again to the same answer (question, answer, contexts and reference) on
    the same metric (for pairs, in the same pair): counted twice it would narrow the intervals for nothing."""
    first: dict[str, int] = {}
    problems = []
    for number, row in rows:
        case = [row["question"], row["answer"], row["contexts"], row.get("reference")]
        for metric in (m for m in _reviewed() if m in row):
            value = row[metric]
            key = json.dumps([*case, metric, value["pair"] if isinstance(value, dict) else None], sort_keys=True)
            if key in first:
                problems.append((number, f"{metric}: the same answer is labelled on line {first[key]}; keep one"))
            else:
                first[key] = number
    return problems


def load_labelled(path: Path) -> list[Labelled]:
    """The labelled answers of a JSONL file, or ConfigError naming every bad line and field."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc
    rows, problems, valid = [], [], []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON: {exc.msg}")
            continue
        found = _problems_of(row)
        problems.extend(f"{path}:{number}: {p}" for p in found)
        if found:
            continue
        valid.append((number, row))
        labels = {m: int(row[m]) for m in _reviewed() if m in row and not isinstance(row[m], dict)}
        pairs = {m: (row[m]["pair"], row[m]["label"] == "good") for m in _reviewed() if isinstance(row.get(m), dict)}
        rows.append(Labelled(number, Case(row["question"], row["answer"], row["contexts"], row.get("reference")),
                             labels, pairs))
    problems.extend(f"{path}:{number}: {problem}" for number, problem in _duplicates(valid))
    problems.extend(_pair_problems(path, rows))
    if not rows and not problems:
        problems.append(f"{path}: no labelled answer")
    if problems:
        raise ConfigError(f"{path} rejected ({len(problems)} problem(s)):\n" + "\n".join(f"  - {p}" for p in problems))
    return rows


def _pair_problems(path: Path, rows: Sequence[Labelled]) -> list[str]:
    members: dict[tuple[str, str], list[tuple[int, bool]]] = {}
    for row in rows:
        for metric, (pair, good) in row.pairs.items():
            members.setdefault((metric, pair), []).append((row.line, good))
    return [f"{path}: {metric} pair {pair!r} (lines {', '.join(str(line) for line, _ in found)}): "
            "exactly one good and one bad answer are required"
            for (metric, pair), found in members.items() if sorted(good for _, good in found) != [False, True]]


@dataclass(frozen=True)
class MetricAgreement:
    metric: str
    judge: Agreement
    longer_answer: Agreement | None   # the baseline, for pairs
    unscored: int                     # labelled answers the judge could not score (a failure, or undefined)


@dataclass(frozen=True)
class CalibrationReport:
    judge: str
    answers: int
    metrics: list[MetricAgreement]

    def kappas(self) -> dict[str, float | None]:
        """Cohen's kappa per labelled metric, ``None`` where undefined (both sides gave one verdict throughout).
        Pairs have no kappa and are left out."""
        return {m.metric: None if math.isnan(m.judge.kappa.value) else m.judge.kappa.value
                for m in self.metrics if m.judge.kind == "labels"}

    def markdown(self) -> str:
        lines = [f"judge {self.judge}, {self.answers} labelled answers", "",
                 "| metric | labels | n | agreement [95% CI] | balanced accuracy [95% CI] | ROC-AUC [95% CI] "
                 "| Cohen's kappa [95% CI] | longer answer wins: agreement | unscored |", "|---|---|---|---|---|---|---|---|---|"]
        for m in self.metrics:
            baseline = str(m.longer_answer.agreement) if m.longer_answer else "-"
            lines.append(f"| {m.metric} | {m.judge.kind} | {m.judge.n} | {m.judge.agreement} | "
                         f"{m.judge.balanced_accuracy} | {m.judge.roc_auc} | {m.judge.kappa} | {baseline} | {m.unscored} |")
        return "\n".join(lines)


def agreements(rows: Sequence[Labelled], scores: Sequence[Mapping[str, Any]]) -> list[MetricAgreement]:
    """Per metric labelled in the rows: the judge's agreement (labels and pairs apart, pairs first)."""
    out = []
    for metric in _reviewed():
        labelled = [(r, s) for r, s in zip(rows, scores) if metric in r.labels]
        paired: dict[str, dict[bool, tuple[Labelled, Any]]] = {}
        for row, score in zip(rows, scores):
            if metric in row.pairs:
                pair, good = row.pairs[metric]
                paired.setdefault(pair, {})[good] = (row, score.get(metric))
        if paired:
            complete = [p for p in paired.values() if p[True][1] is not None and p[False][1] is not None]
            unscored = sum(1 for p in paired.values() for _, v in p.values() if v is None)
            out.append(MetricAgreement(
                metric, paired_agreement([p[True][1] for p in complete], [p[False][1] for p in complete]),
                paired_agreement([len(p[True][0].case.answer) for p in complete],
                                 [len(p[False][0].case.answer) for p in complete]), unscored))
        if labelled:
            scored = [(r, s[metric]) for r, s in labelled if s.get(metric) is not None]
            out.append(MetricAgreement(metric, label_agreement([v for _, v in scored],
                                                               [r.labels[metric] for r, _ in scored]),
                                       None, len(labelled) - len(scored)))
    return out


def calibrate(path: Path, llm: LLMClient | None = None, *, embedder: str = "hashing",
              cache: LLMCache | None = None) -> CalibrationReport:
    """Judge every labelled answer of the file and measure the judge's agreement with the labels."""
    rows = load_labelled(path)
    scores = judge_cases([r.case for r in rows], llm, embedder=embedder, cache=cache)
    return CalibrationReport(scores[0]["judge"], len(rows), agreements(rows, scores))
