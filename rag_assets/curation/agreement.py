"""Several reviewers on one candidate: which decisions stand, whether they agree, and how well
two reviewers agree overall (Cohen's kappa).

Every decision is kept. What stands for a candidate is each reviewer's latest decision; an
adjudicator (a reviewer named ``adjudicator:<name>``) settles a conflict, since their decision
replaces every decision made before it. The candidate's decision applies only while everything
that stands agrees (same decision and same edited text); otherwise the candidate is a conflict
and the golden set is left as it was until the reviewers agree or an adjudicator decides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations

ADJUDICATOR_PREFIX = "adjudicator:"

#: (decision, edited_question, edited_answer): two reviewers agree when these are equal.
Content = tuple[str, str | None, str | None]


def standing(history: Iterable[tuple[str, Content]]) -> dict[str, Content]:
    """The decisions that stand, by reviewer, from ``(reviewer, content)`` pairs oldest first."""
    current: dict[str, Content] = {}
    for reviewer, content in history:
        if reviewer.startswith(ADJUDICATOR_PREFIX):
            current = {}
        current[reviewer] = content
    return current


def agreed(decisions: Mapping[str, Content]) -> Content | None:
    """The content every standing decision shares, or None when they disagree (or there are none)."""
    distinct = set(decisions.values())
    return distinct.pop() if len(distinct) == 1 else None


def cohens_kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items: (p_o - p_e) / (1 - p_e).

    None when it is undefined: no items, or both raters used one and the same label throughout."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second)) / n
    counts_a, counts_b = Counter(first), Counter(second)
    expected = sum(counts_a[label] * counts_b[label] for label in counts_a) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class ReviewerAgreement:
    first: str
    second: str
    items: int  # candidates both decided
    observed: float  # share of those with the same decision
    kappa: float | None


def pairwise_agreement(latest: Mapping[str, Mapping[str, str]]) -> list[ReviewerAgreement]:
    """For every two reviewers who decided at least one same candidate, their agreement on the
    decision label; ``latest`` maps candidate -> reviewer -> that reviewer's latest decision."""
    reviewers = sorted({reviewer for by_reviewer in latest.values() for reviewer in by_reviewer})
    found = []
    for first, second in combinations(reviewers, 2):
        shared = [by_reviewer for by_reviewer in latest.values() if first in by_reviewer and second in by_reviewer]
        if not shared:
            continue
        a, b = [d[first] for d in shared], [d[second] for d in shared]
        found.append(ReviewerAgreement(first, second, len(shared), sum(x == y for x, y in zip(a, b)) / len(shared),
                                       cohens_kappa(a, b)))
    return found
