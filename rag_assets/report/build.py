"""The evaluation report: a markdown summary for the Dagster UI and the data of the HTML report."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_assets.calibration.models import comparable_metrics
from rag_assets.curation.accept_all import unreviewed, unreviewed_note
from rag_assets.golden.models import GoldenItem
from rag_assets.rag.models import RagResponse
from rag_assets.report.compare import EvaluationDiff
from rag_assets.report.html import MetricSummary, ReportData, write_report
from rag_assets.report.items import Claim, Context, ItemDetail
from rag_assets.scoring.diagnosis import diagnose
from rag_assets.scoring.evaluate import EvaluationOutcome, ItemScores
from rag_assets.scoring.metrics import REGISTRY
from rag_assets.scoring.scorecard import Gates, Scorecard
from rag_assets.text.markdown import escape_markdown, markdown_list, markdown_table

WORST_ITEMS = 10


@dataclass(frozen=True)
class Report:
    data: ReportData
    diagnosis: tuple[str, ...]
    worst: tuple[dict, ...]

    def write(self, path: Path) -> Path:
        return write_report(self.data, path)


def _core() -> list[str]:
    """The judge's own verdicts (``Registry.reviewed``): what ranks the worst items and gets a distribution."""
    return [m.name for m in REGISTRY.reviewed()]


def _badness(item: ItemScores) -> float:
    return sum(1 - item.values[m] for m in _core() if m in item.values) + 0.5 * sum(item.hallucinations.values())


def _why(item: ItemScores) -> str:
    parts = [f"{verdict} x{count}" for verdict, count in sorted(item.hallucinations.items()) if count]
    parts += [f"{m} {item.values[m]:.2f}" for m in _core() if m in item.values and item.values[m] < 0.5]
    return "; ".join(parts) or "lowest scores overall"


def worst_items(card: Scorecard, items: Sequence[GoldenItem], limit: int = WORST_ITEMS) -> list[dict]:
    question = {i.item_id: i.question for i in items}
    ranked = sorted((i for i in card.items if i.rag_error is None and i.values), key=lambda i: (-_badness(i), i.item_id))
    return [{"item_id": i.item_id, "question_type": i.question_type, "question": question.get(i.item_id, ""),
             **{m: round(i.values[m], 3) for m in _core() if m in i.values}, "why": _why(i)}
            for i in ranked[:limit] if _badness(i) > 0]


def item_details(card: Scorecard, items: Sequence[GoldenItem], responses: Mapping[str, RagResponse]) -> list[ItemDetail]:
    """Every scored item with its answer, claims, contexts and citations: worst first, RAG failures first of all."""
    golden = {i.item_id: i for i in items}
    details = []
    for scores in sorted(card.items, key=lambda i: (i.rag_error is None, -_badness(i), i.item_id)):
        item, response = golden.get(scores.item_id), responses.get(scores.item_id)
        relevant = {r.chunk_id for r in item.relevant_chunks} if item else set()
        details.append(ItemDetail(
            item_id=scores.item_id, question_type=scores.question_type,
            question=item.question if item else "", reference=item.reference_answer or "" if item else "",
            answer=response.answer if response else None, metrics=dict(scores.values),
            claims=[Claim(c["claim"], c["verdict"], tuple(c.get("supporting_chunk_ids") or ())) for c in scores.claims],
            contexts=[Context(r.rank, r.chunk_id, r.text, r.chunk_id in relevant, scores.useful.get(r.chunk_id))
                      for r in (response.retrieved if response else ())],
            citations=[(c.claim, c.chunk_id) for c in (response.citations if response else ())],
            failures=dict(scores.failures), rag_error=scores.rag_error))
    return details


def trend_rows(history: Sequence, judged_elsewhere: Collection[str]) -> tuple[list[dict], str]:
    """The trend's rows of the ``history`` (oldest first) and the note on what was left out: an evaluation in
    ``judged_elsewhere`` (scored by another judge configuration than this one, or by one never recorded) gives no
    judge-scored value (``comparable_metrics``), so a change of judge is never drawn as a change of the system."""
    rows = []
    for h in history:
        kept = comparable_metrics(_core(), same=h.evaluation_id not in judged_elsewhere)
        if kept:
            rows.append({"label": h.evaluation_id[-6:], "created_at": h.created_at,
                         **{m: (h.aggregates.get("overall", {}).get(m) or {}).get("mean") for m in kept}})
    left_out = sum(h.evaluation_id in judged_elsewhere for h in history)
    note = (f"{left_out} earlier evaluation{'s' if left_out != 1 else ''} scored by another judge configuration, or "
            "by one never recorded, left out of the judge-scored metrics' trend: one judge's scores are not "
            "comparable with another's." if left_out else "")
    return rows, note


def build_report(evaluation_id: str, corpus_version: str, run, card: Scorecard, gates: Gates,
                 outcome: EvaluationOutcome, items: Sequence[GoldenItem], history: Sequence,
                 responses: Mapping[str, RagResponse] | None = None, baseline: EvaluationDiff | None = None,
                 calibration: Mapping[str, str] | None = None, probes: Mapping[str, str] | None = None,
                 judged_elsewhere: Collection[str] = ()) -> Report:
    """The report of one evaluation; ``calibration`` and ``probes``: per metric its judge's agreement with the
    experts (kappa with its interval) and its judge probes' pass rates, shown beside it; ``judged_elsewhere``: the
    evaluations of the ``history`` another (or an unrecorded) judge configuration scored (see ``trend_rows``)."""
    minimum = {t.metric: t for t in gates.thresholds}

    def summary(name: str, agg) -> MetricSummary:
        threshold = minimum.get(name)
        metric = REGISTRY.find(name)
        return MetricSummary(name, agg.mean, agg.std, agg.n, agg.failures,
                             threshold.minimum if threshold else None,
                             threshold.passed if threshold and threshold.applicable else None,
                             metric.label if metric else "", metric.definition if metric else "")

    means = {name: agg.mean for name, agg in card.overall.items()}
    diagnosis = tuple(diagnose(means, card.hallucinations, outcome.k))
    worst = tuple(worst_items(card, items))
    rows, history_note = trend_rows(history, judged_elsewhere)
    stats = outcome.stats
    data = ReportData(
        title=f"Evaluation {evaluation_id}",
        generated_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        corpus_version=corpus_version,
        golden_version=run.golden_version,
        rag_system=f"{run.system_name} ({run.system_config_hash})",
        judge=judge_label(stats.provider, stats.model),
        metrics=[summary(name, agg) for name, agg in card.overall.items()],
        per_type={t: [summary(name, agg) for name, agg in aggs.items()] for t, aggs in card.per_type.items()},
        distributions={m: [i.values[m] for i in card.items if m in i.values] for m in _core()},
        history=rows,
        history_note=history_note,
        worst_items=list(worst),
        diagnosis=list(diagnosis),
        gates=[{"gate": "thresholds", "status": "passed" if gates.thresholds_passed else "failed",
                "detail": gates.thresholds_text()},
               {"gate": "regression", "status": "passed" if gates.regression_passed else "failed",
                "detail": gates.regression_text()},
               {"gate": "judge failure budget", "status": "passed" if gates.failure_budget_passed else "failed",
                "detail": gates.failure_budget_text()},
               *([{"gate": "RAG error budget", "status": "passed" if gates.rag_error_budget_passed else "failed",
                   "detail": gates.rag_errors.describe()}] if gates.rag_errors is not None else [])],
        items=item_details(card, items, responses or {}),
        baseline=baseline,
        calibration=dict(calibration or {}),
        probes=dict(probes or {}),
        unreviewed=unreviewed_note(len(trial), len(items)) if (trial := unreviewed(items)) else "",
        cost={"judge calls": outcome.calls, "API requests": stats.requests, "cache hits": stats.cache_hits,
              "input tokens": stats.input_tokens, "output tokens": stats.output_tokens,
              "cost (USD)": round(stats.cost_usd, 4)},
    )
    return Report(data, diagnosis, worst)


def judge_label(provider: str, model: str) -> str:
    return "offline (deterministic heuristics, not a model's judgment)" if provider == "offline" else f"{provider} / {model}"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def worst_markdown(report: Report, limit: int = WORST_ITEMS) -> str:
    """The worst items and why, as a markdown table (the evaluation metadata leads with it)."""
    return markdown_table(["item", "type", "question", "why"],
                          [(w["item_id"], w["question_type"], w["question"], w["why"]) for w in report.worst], limit=limit)


def summary_markdown(card: Scorecard, gates: Gates, report: Report) -> str:
    metrics = markdown_table(["metric", "mean", "std", "n", "judge failures"],
                             [(m, _fmt(a.mean), _fmt(a.std), a.n, a.failures) for m, a in card.overall.items()], limit=100)
    types = sorted(card.per_type)
    per_type = markdown_table(["metric", *types], [
        (m, *(_fmt(card.per_type[t][m].mean) for t in types)) for m in _core()], limit=100)
    gate_rows = markdown_table(["gate", "status", "detail"], [(g["gate"], g["status"], g["detail"]) for g in report.data.gates])
    worst = worst_markdown(report)
    diagnosis = markdown_list(report.diagnosis)
    return (f"**Judge:** {escape_markdown(report.data.judge)}\n\n### Metrics\n\n{metrics}\n\n### Per question type\n\n{per_type}\n\n"
            f"### Gates\n\n{gate_rows}\n\n### Diagnosis\n\n{diagnosis}\n\n### Worst items\n\n{worst}\n")
