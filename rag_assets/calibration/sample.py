"""Which judged items go to the experts, and what they see of each.

The sample is stratified by the judge's verdict and score. Every item belongs to several strata: its
question type, and per reviewed metric the band of the judge's score: fail (below 0.25), borderline
(0.25 to 0.75, where the pass/fail cut at 0.5 lies) and pass (above 0.75). The strata are drawn from in
turn, the smallest first (round robin, seeded), each taking an item not drawn yet. So whenever the sample
is at least as large as the number of strata, every band present of every metric is in it: the fails of a
judge that passes nearly everything (a lenient judge, caught when experts fail its passes), the passes
of a strict one, and the borderline scores where the two differ most. A proportional sample of 30 would
often hold no fail and no borderline score at all, and kappa needs both verdicts on both sides.
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


#: Score bands: below FAIL_BELOW a clear fail, above PASS_ABOVE a clear pass, in between (both ends
#: included) borderline, around the 0.5 pass/fail cut (``rag_assets.calibration.models.verdict``).
FAIL_BELOW, PASS_ABOVE = 0.25, 0.75


def band(value: float) -> str:
    """The band of a judge score: ``fail``, ``borderline`` or ``pass``."""
    return "fail" if value < FAIL_BELOW else "pass" if value > PASS_ABOVE else "borderline"


def strata(item: ReviewItem) -> tuple[tuple[str, str], ...]:
    """The strata ``item`` is drawn from: (``question_type``, its type), and (metric, band of its score) for
    every reviewed metric the judge scored."""
    return (("question_type", item.question_type),
            *((metric, band(value)) for metric, value in item.scores.items() if value is not None))


def stratified_sample(items: Sequence[ReviewItem], size: int = DEFAULT_SAMPLE_SIZE,
                      seed: int = DEFAULT_SEED) -> list[ReviewItem]:
    """Up to ``size`` items, drawn in turn from every stratum, the smallest first (see the module docstring),
    in item-id order. The same items and seed give the same sample."""
    rng = random.Random(seed)
    groups: dict[tuple[str, str], list[ReviewItem]] = {}
    for item in sorted(items, key=lambda i: i.item_id):
        for key in strata(item):
            groups.setdefault(key, []).append(item)
    queues = [groups[key] for key in sorted(groups)]
    for queue in queues:
        rng.shuffle(queue)
    rng.shuffle(queues)
    queues.sort(key=len)  # stable: strata of the same size stay in their seeded order
    chosen: dict[str, ReviewItem] = {}
    while len(chosen) < size and any(queues):
        for queue in queues:
            while queue and queue[-1].item_id in chosen:
                queue.pop()
            if queue and len(chosen) < size:
                item = queue.pop()
                chosen[item.item_id] = item
    return sorted(chosen.values(), key=lambda i: i.item_id)
