"""Which judged items go to the experts, and what they see of each.

The sample is stratified: items are grouped by question type and by the judge's pass/fail on every
reviewed metric, and the groups are drawn from in turn (round robin, seeded), so a rare verdict, the
fails the judge gives a good system seldom, is reviewed as surely as a common one. Kappa needs both
verdicts on both sides; a proportional sample of 30 would often hold no fail at all.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from rag_assets.calibration.models import REVIEWED_METRICS, ReviewItem, verdict
from rag_assets.golden.models import GoldenItem
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.evaluate import ItemScores

DEFAULT_SAMPLE_SIZE = 30
DEFAULT_SEED = 0


def _quoted(texts: Sequence[str], limit: int = 3) -> str:
    shown = "; ".join(texts[:limit])
    return shown + (f" (+{len(texts) - limit} more)" if len(texts) > limit else "")


def _faithfulness(output: Mapping) -> str:
    claims = output.get("claims", [])
    if not claims:
        return "the answer makes no factual claim"
    off = [c for c in claims if c["verdict"] != "grounded"]
    text = f"{len(claims) - len(off)} of {len(claims)} claims grounded in the contexts"
    shown = _quoted([f"\"{c['claim']}\" ({c['verdict']})" for c in off])
    return text + (f"; not grounded: {shown}" if off else "")


def _relevance(output: Mapping) -> str:
    parts = "; ".join(f"\"{p['part']}\" answered {p['answered']:g}" for p in output.get("question_parts", []))
    statements = output.get("statements", [])
    addressing = sum(1 for s in statements if s["addresses_question"])
    noncommittal = ", noncommittal" if output.get("noncommittal") else ""
    return f"question parts: {parts}; {addressing} of {len(statements)} statements address the question{noncommittal}"


def _precision(output: Mapping) -> str:
    verdicts = output.get("verdicts", [])
    useful = [v["chunk_id"] for v in verdicts if v["useful"]]
    return f"{len(useful)} of {len(verdicts)} retrieved chunks useful" + (f": {', '.join(useful)}" if useful else "")


def _recall(output: Mapping) -> str:
    statements = output.get("statements", [])
    missing = [s["statement"] for s in statements if not s["attributed"]]
    text = f"{len(statements) - len(missing)} of {len(statements)} reference statements supported by the contexts"
    shown = _quoted([f"\"{m}\"" for m in missing])
    return text + (f"; unsupported: {shown}" if missing else "")


_REASONS = {"faithfulness": _faithfulness, "answer_relevance": _relevance, "context_precision": _precision,
            "context_recall": _recall}


def review_item(scores: ItemScores, item: GoldenItem, response: RagResponse) -> ReviewItem:
    """The item with the judge's score and reasons per reviewed metric (a failed call's reason is its error)."""
    values = {m: scores.values.get(m) for m in REVIEWED_METRICS}
    reasons = {}
    for metric in REVIEWED_METRICS:
        if metric in scores.failures:
            reasons[metric] = f"the judge failed: {scores.failures[metric]}"
        elif values[metric] is not None and metric in scores.outputs:
            reasons[metric] = _REASONS[metric](scores.outputs[metric])
        else:
            reasons[metric] = "not judged for this item"
    return ReviewItem(item.item_id, item.question_type, item.question, response.answer or "",
                      tuple(r.text for r in response.retrieved), values, reasons)


def reviewable(outcome_items: Sequence[ItemScores], items: Mapping[str, GoldenItem],
               responses: Mapping[str, RagResponse]) -> list[ReviewItem]:
    """The judged items an expert can check: answered, with at least one reviewed metric scored."""
    return [review_item(s, items[s.item_id], responses[s.item_id]) for s in outcome_items
            if s.rag_error is None and s.item_id in responses and any(m in s.values for m in REVIEWED_METRICS)]


def stratum(item: ReviewItem) -> tuple[str, ...]:
    return (item.question_type, *(verdict(v) if v is not None else "-" for v in item.scores.values()))


def stratified_sample(items: Sequence[ReviewItem], size: int = DEFAULT_SAMPLE_SIZE,
                      seed: int = DEFAULT_SEED) -> list[ReviewItem]:
    """Up to ``size`` items, drawn in turn from every stratum (see the module docstring), in item-id order.
    The same items and seed give the same sample."""
    rng = random.Random(seed)
    groups: dict[tuple[str, ...], list[ReviewItem]] = {}
    for item in sorted(items, key=lambda i: i.item_id):
        groups.setdefault(stratum(item), []).append(item)
    queues = [groups[key] for key in sorted(groups)]
    for queue in queues:
        rng.shuffle(queue)
    rng.shuffle(queues)
    chosen: list[ReviewItem] = []
    while len(chosen) < size and any(queues):
        for queue in queues:
            if queue and len(chosen) < size:
                chosen.append(queue.pop())
    return sorted(chosen, key=lambda i: i.item_id)
