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
from rag_assets.scoring.metrics import REGISTRY

DEFAULT_SAMPLE_SIZE = 30
DEFAULT_SEED = 0


def review_item(scores: ItemScores, item: GoldenItem, response: RagResponse) -> ReviewItem:
    """The item with the judge's score and reasons per reviewed metric (a failed call's reason is its error)."""
    values = {m: scores.values.get(m) for m in REVIEWED_METRICS}
    reasons = {}
    for metric in map(REGISTRY.get, REVIEWED_METRICS):
        name, task = metric.name, metric.task.name if metric.task else metric.name
        if name in scores.failures:
            reasons[name] = f"the judge failed: {scores.failures[name]}"
        elif values[name] is not None and task in scores.outputs and metric.reason is not None:
            reasons[name] = metric.reason(scores.outputs[task])
        else:
            reasons[name] = "not judged for this item"
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
