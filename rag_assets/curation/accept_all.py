"""Trial mode (``rag-assets run --accept-all``): a golden set from the generated candidates before anyone
has reviewed them, labelled unreviewed wherever an item shows.

A team trying the tool on its own corpus wants numbers on the first day, before its experts have time to
review. Accepting every candidate gives them, at a price: nobody checked the questions or the reference
answers. So each such item carries ``UNREVIEWED_ORIGIN`` as its origin (store, exports, asset metadata, CLI
summary, report banner), and no review decision is recorded for it: the candidate stays pending in the review
queue, because it still waits for an expert. An expert's later decision is an ordinary first decision: accept
drops the label (the item becomes ``generated``), edit adds a revision, reject takes the item out of the
next golden-set version. Recording an accept by nobody instead would stand beside the expert's decision as a
second reviewer's and turn every reject into a conflict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rag_assets.generation.models import Candidate
from rag_assets.golden.models import UNREVIEWED_ORIGIN, GoldenItem


def trial_candidates(pending: Iterable[Candidate]) -> list[Candidate]:
    """The pending candidates a trial accepts: new questions with their evidence (an adversarial one needs
    none). A re-review of a stale golden item is left to a person: what changed in its evidence is the
    question, and accepting it unseen would hide the change."""
    return [c for c in pending if not c.origin_item_id and (c.relevant_chunks or c.question_type == "adversarial")]


def unreviewed(items: Sequence[GoldenItem]) -> list[GoldenItem]:
    """The items of a golden set that no expert has reviewed."""
    return [item for item in items if item.origin == UNREVIEWED_ORIGIN]


def unreviewed_note(count: int, total: int) -> str:
    """The one line every place that shows a golden set with unreviewed items prints."""
    return (f"UNREVIEWED: {count} of {total} golden items were accepted by --accept-all without review "
            f"(origin {UNREVIEWED_ORIGIN}); the scores measure the system against unchecked questions and answers")
