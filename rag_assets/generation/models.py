"""Question candidates and the knobs of a generation run."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from rag_assets.corpus.models import ChunkRef, sha256_hex


class QuestionType(str, Enum):
    FACTUAL = "factual"
    MULTI_HOP = "multi_hop"
    ABSTRACTIVE = "abstractive"
    COMPARATIVE = "comparative"
    ADVERSARIAL = "adversarial"
    TERMINOLOGY = "terminology"


DEFAULT_TYPE_MIX: dict[str, float] = {
    QuestionType.FACTUAL.value: 0.3,
    QuestionType.MULTI_HOP.value: 0.15,
    QuestionType.ABSTRACTIVE.value: 0.15,
    QuestionType.COMPARATIVE.value: 0.15,
    QuestionType.ADVERSARIAL.value: 0.1,
    QuestionType.TERMINOLOGY.value: 0.15,
}


@dataclass(frozen=True)
class Candidate:
    """A generated question awaiting expert review.

    ``relevant_chunks`` are the chunks that answer it (empty for adversarial questions, which no
    chunk answers); ``source_chunks`` are the chunks it was generated from (what "covered" means).
    """

    candidate_id: str
    question: str
    reference_answer: str
    question_type: str
    relevant_chunks: tuple[ChunkRef, ...]
    source_chunks: tuple[ChunkRef, ...]
    corpus_version: str
    provider: str
    model: str
    prompt_ref: str
    origin_item_id: str | None = None  # set when a stale golden item is sent back to review
    change_note: str = ""  # for such an item: where its evidence was, what it said, what stands there now

    @property
    def evidence_vanished(self) -> bool:
        """An answerable question none of whose evidence is left in its corpus version (a re-review whose text
        is gone): a review can only reject it, having no column for new evidence. An adversarial question has
        no evidence by design."""
        return self.question_type != "adversarial" and not self.relevant_chunks

    @staticmethod
    def make_id(question_type: str, question: str, relevant: tuple[ChunkRef, ...], source: tuple[ChunkRef, ...]) -> str:
        anchors = sorted(ref.chunk_id for ref in relevant or source)
        return "q-" + sha256_hex("\0".join([question_type, " ".join(question.lower().split()), *anchors]))[:12]


@dataclass(frozen=True)
class GenerationConfig:
    type_mix: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TYPE_MIX))
    per_task: int = 1
    max_tasks: int = 60
    dedupe_threshold: float = 0.8
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.type_mix) - {t.value for t in QuestionType}
        if unknown:
            raise ValueError(f"unknown question types in type_mix: {', '.join(sorted(unknown))}")
        if any(weight < 0 for weight in self.type_mix.values()) or not sum(self.type_mix.values()) > 0:
            raise ValueError("type_mix weights must be non-negative and not all zero")
        if self.per_task < 1 or self.max_tasks < 0:
            raise ValueError("per_task must be >= 1 and max_tasks >= 0")
        if not 0 < self.dedupe_threshold <= 1:
            raise ValueError("dedupe_threshold must be in (0, 1]")
