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

from rag_assets.calibration.models import REVIEWED_METRICS, ReviewItem
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
