"""The data of the report's drill-down: every item on its own expandable row, and filters over them.

Each item is a ``<details>`` element (``templates/item.html``): question, reference, the system's
answer with each claim marked by the judge's verdict and the chunks it was checked against, the
retrieved contexts in rank order with their relevance marks, citations, every metric and every
failure. A few lines of inline script (``templates/filter_items.js``) filter the rows by question
type, by a metric below its threshold, and by claim verdict; without script every row is simply
shown. This module decides what a row is marked with; the templates lay it out.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Claim", "Context", "ItemDetail", "ItemRow", "item_filters", "item_rows"]

# Below this a metric with no threshold counts as low for the metric filter.
LOW_WITHOUT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Claim:
    text: str
    verdict: str  # grounded | out_of_context | inconsistency | fabrication
    chunk_ids: Sequence[str] = ()


@dataclass(frozen=True)
class Context:
    rank: int
    chunk_id: str
    text: str
    relevant: bool  # a golden label says this chunk answers the question
    useful: bool | None = None  # the judge's context-precision verdict, None when not judged


@dataclass(frozen=True)
class ItemDetail:
    """One item of the evaluation with everything needed to see why it scored as it did."""

    item_id: str
    question_type: str
    question: str
    reference: str
    answer: str | None
    metrics: Mapping[str, float] = field(default_factory=dict)
    claims: Sequence[Claim] = ()
    contexts: Sequence[Context] = ()
    citations: Sequence[tuple[str, str]] = ()  # (sentence, chunk id)
    failures: Mapping[str, str] = field(default_factory=dict)
    rag_error: str | None = None


def low_metrics(item: ItemDetail, thresholds: Mapping[str, float | None]) -> list[str]:
    """The metrics of ``item`` below their threshold (or below 0.5 where there is none)."""
    low = []
    for name, value in item.metrics.items():
        limit = thresholds.get(name)
        if math.isfinite(value) and value < (LOW_WITHOUT_THRESHOLD if limit is None else limit):
            low.append(name)
    return low


@dataclass(frozen=True)
class ItemRow:
    """An item as its row is marked: the filters match ``low`` and ``verdicts``, the tags show them."""

    item: ItemDetail
    low: list[str]  # metrics below their threshold
    verdicts: list[str]  # its claims' verdicts, each once


def item_rows(items: Sequence[ItemDetail], thresholds: Mapping[str, float | None]) -> Iterator[ItemRow]:
    """The rows one at a time, as the page writes them out (``templates/items.html``)."""
    for item in items:
        yield ItemRow(item, low_metrics(item, thresholds), sorted({c.verdict for c in item.claims}))


def item_filters(items: Sequence[ItemDetail], metric_names: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """The filter bar's lists as (the row attribute matched, label, choices): the question types, the
    metrics any item has, and the claim verdicts that occur."""
    return [("type", "question type", sorted({i.question_type for i in items})),
            ("low", "metric below threshold", [n for n in metric_names if any(n in i.metrics for i in items)]),
            ("verdicts", "claim verdict", sorted({c.verdict for i in items for c in i.claims}))]
