"""What an evaluation keeps of one item: its metric values, the judge's failures and the judge's findings."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ItemScores:
    item_id: str
    revision: int
    question_type: str
    values: dict[str, float] = field(default_factory=dict)       # defined values only
    failures: dict[str, str] = field(default_factory=dict)       # metric -> why the judge could not score it
    hallucinations: dict[str, int] = field(default_factory=dict)  # verdict -> claims
    fabricated_citations: int = 0
    rag_error: str | None = None
    claims: list[dict] = field(default_factory=list)   # the judge's claims: claim, verdict, supporting_chunk_ids
    useful: dict[str, bool] = field(default_factory=dict)  # chunk id -> the judge's context-precision verdict
    outputs: dict[str, dict] = field(default_factory=dict)  # judge task -> its parsed answer: the reasons shown to experts
