"""Daily samples are reproducible, order-independent, and differ between days."""

from __future__ import annotations

from datetime import UTC, date, datetime

from rag_assets.production.logs import ProductionQuery
from rag_assets.production.sampling import sample_day


def _queries(n: int) -> list[ProductionQuery]:
    when = datetime(2024, 5, 1, tzinfo=UTC)
    return [ProductionQuery(f"q{i:03d}", when, f"question {i}", "answer", ()) for i in range(n)]


def test_sample_is_reproducible_and_independent_of_order() -> None:
    records = _queries(100)
    day = date(2024, 5, 1)
    first = sample_day(records, day, 10)
    assert len(first) == 10
    assert sample_day(list(reversed(records)), day, 10) == first


def test_sample_differs_across_days_and_keeps_small_days_whole() -> None:
    records = _queries(100)
    assert sample_day(records, date(2024, 5, 1), 10) != sample_day(records, date(2024, 5, 2), 10)
    assert sample_day(records[:5], date(2024, 5, 1), 10) == records[:5]
