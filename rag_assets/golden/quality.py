"""Quality rules of a golden-set version (great-expectations for the tabular ones)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_assets.golden.models import GoldenItem

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class GoldenPolicy:
    min_items: int = 1
    max_items: int = 100_000
    required_types: tuple[str, ...] = ()
    max_type_share: float = 1.0


@dataclass(frozen=True)
class QualityReport:
    problems: tuple[str, ...] = field(default=())
    items: int = 0
    by_type: dict[str, int] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.problems

    def named(self, shown: int = 3) -> str:
        """The first ``shown`` problems, for a check's one line (": a; b (and 2 more)"; empty when none): a count
        alone ("0 items, 1 problem(s)") sent the reader to the UI to learn what failed. The metadata has them all."""
        if not self.problems:
            return ""
        more = len(self.problems) - shown
        return ": " + "; ".join(self.problems[:shown]) + (f" (and {more} more)" if more > 0 else "")


def _frame(items: Sequence[GoldenItem]) -> pd.DataFrame:
    import pandas as pd  # only the quality check needs it: loading the code location does not

    return pd.DataFrame({
        "item_id": [i.item_id for i in items],
        "question": [i.question.strip() for i in items],
        "reference_answer": [i.reference_answer.strip() or None for i in items],
        "question_type": [i.question_type for i in items],
    }, columns=["item_id", "question", "reference_answer", "question_type"])


def golden_quality(items: Sequence[GoldenItem], chunk_hashes: Mapping[str, str], policy: GoldenPolicy) -> QualityReport:
    """Every problem of the golden set, each naming the items concerned."""
    import great_expectations as gx  # a 4-second import: paid by the check, not by loading the code location
    from great_expectations.expectations.row_conditions import Column

    from rag_assets.quality.expectations import validate_frame

    frame = _frame(items)
    failures = validate_frame(frame, [
        gx.expectations.ExpectColumnValuesToBeUnique(column="item_id"),
        gx.expectations.ExpectColumnValueLengthsToBeBetween(column="question", min_value=1),
        gx.expectations.ExpectColumnValuesToNotBeNull(
            column="reference_answer", row_condition=Column("question_type") != "adversarial"),
        gx.expectations.ExpectTableRowCountToBeBetween(min_value=policy.min_items, max_value=policy.max_items),
    ])
    problems = []
    for failure in failures:
        ids = sorted({frame["item_id"].iloc[i] for i in failure.row_indexes})
        subject = f" for items {', '.join(ids[:10])}" + (" ..." if len(ids) > 10 else "") if ids else ""
        problems.append(f"{failure.expectation} on {failure.column or 'the table'} failed{subject}"
                        + (f" (observed {failure.observed})" if failure.observed is not None and not ids else ""))
    for item in items:
        missing = [r.chunk_id for r in item.relevant_chunks if chunk_hashes.get(r.chunk_id) != r.content_hash]
        if missing:
            problems.append(f"item {item.item_id}: relevant chunk(s) {', '.join(missing)} not in the pinned snapshot "
                            f"{item.corpus_version} with the pinned content")
        if item.question_type != "adversarial" and not item.relevant_chunks:
            problems.append(f"item {item.item_id}: a {item.question_type} item needs at least one relevant chunk")
    by_type = dict(Counter(i.question_type for i in items))
    absent = [t for t in policy.required_types if t not in by_type]
    if absent:
        problems.append(f"question types required but absent: {', '.join(absent)}")
    for qtype, count in sorted(by_type.items()):
        if items and count / len(items) > policy.max_type_share:
            problems.append(f"type {qtype} is {count / len(items):.0%} of the set, over max_type_share "
                            f"{policy.max_type_share:.0%}")
    return QualityReport(tuple(problems), len(items), by_type)
