"""What a judge review carries: the judge configuration it pins, the items sent out, the verdicts read back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from rag_assets.corpus.models import sha256_hex
from rag_assets.llm.client import LLMClient
from rag_assets.scoring.agreement import THRESHOLD
from rag_assets.scoring.judge_prompts import JUDGE_TEMPLATES_REF
from rag_assets.scoring.metrics import REGISTRY

#: The metrics experts review: the judge's own verdicts (retrieval metrics come from golden labels), the
#: registered metrics with a reason text; the review file's columns are made of them.
REVIEWED_METRICS = tuple(m.name for m in REGISTRY.reviewed())
PASS, FAIL = "pass", "fail"


def verdict(value: float) -> str:
    """A judge score as the pass/fail an expert gives: the scores are shares, 0.5 is their midpoint
    (the threshold the ``calibrate`` command uses too), not a tuned cut."""
    return PASS if value >= THRESHOLD else FAIL


@dataclass(frozen=True)
class JudgeConfig:
    """Everything that shapes a judge verdict: a calibration holds for exactly one of these."""

    provider: str
    model: str
    templates: str  # the judge templates' refs, e.g. "judge_faithfulness@3+..."
    embedder: str

    @classmethod
    def of(cls, judge: LLMClient, embedder: str) -> JudgeConfig:
        """The configuration of ``judge`` judging with the current templates and ``embedder``."""
        return cls(judge.provider, judge.model, JUDGE_TEMPLATES_REF, embedder)

    @property
    def key(self) -> str:
        """A short stable id, written into the review file and stored with every verdict."""
        return "jc-" + sha256_hex(self.as_json())[:12]

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> JudgeConfig:
        return cls(**json.loads(text))

    def label(self) -> str:
        return f"{self.provider} / {self.model}, templates {self.templates}, embedder {self.embedder}"


#: Stands for the judge configuration of an evaluation saved before judge configurations were recorded.
UNRECORDED_JUDGE = "unknown: saved before judge configurations were recorded"


def same_judge(scored_by: str | None, judge: str | None) -> bool:
    """Whether two evaluations' judge-scored metrics are comparable: one recorded judge configuration
    (``JudgeConfig.key``) scored both. An evaluation whose judge configuration was never recorded is not assumed
    to share any."""
    return scored_by is not None and scored_by == judge


def comparable_metrics(metrics: Sequence[str], same: bool, counted_alike: bool = True) -> list[str]:
    """The metrics two evaluations can be compared on: all when the ``same`` judge configuration scored both, else
    only those no judge scores, since a change of judge moves the judge's scores as a change of the system would;
    and without the retrieval figures unless both were ``counted_alike`` (``scoring.retrieval.RULES``), for the same
    reason."""
    left_out = set() if same else set(REGISTRY.names("judge"))
    if not counted_alike:
        left_out |= {m for m in metrics if (metric := REGISTRY.find(m)) is not None and metric.kind == "retrieval"}
    return [m for m in metrics if m not in left_out]


@dataclass(frozen=True)
class ReviewItem:
    """One judged item as the expert sees it: per metric the judge's score (None: not judged) and reasons."""

    item_id: str
    question_type: str
    question: str
    answer: str
    contexts: tuple[str, ...]
    scores: dict[str, float | None]
    reasons: dict[str, str]


@dataclass(frozen=True)
class ExpertVerdict:
    """An expert's pass/fail on one metric of one item, beside the judge's, with where it was read."""

    item_id: str
    metric: str
    judge_verdict: str
    expert_verdict: str
    reviewer: str
    notes: str | None
    row: int


@dataclass(frozen=True)
class JudgeReview:
    """A judge-review file that passed validation, ready to be stored in one transaction."""

    path: str
    sha256: str
    evaluation_id: str
    judge_config: str  # JudgeConfig.key
    verdicts: tuple[ExpertVerdict, ...]
    unreviewed: int  # rows with no expert verdict yet


@dataclass(frozen=True)
class StoredCalibration:
    """One metric's stored calibration; ``kappa`` None when it was undefined."""

    config: JudgeConfig
    metric: str
    n: int
    accuracy: float
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    created_at: str

    def describe(self) -> str:
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.2f}"
        interval = ("" if self.kappa_low is None or self.kappa_high is None
                    else f" (95% interval {self.kappa_low:.2f} to {self.kappa_high:.2f})")
        return f"judge agreement with your experts κ={kappa}{interval}, n={self.n}"


def calibration_lines(metrics: Mapping[str, StoredCalibration], names: Sequence[str]) -> dict[str, str]:
    """Per metric the text shown beside its score: the calibration, or that there is none for this judge."""
    return {m: metrics[m].describe() if m in metrics else "judge not calibrated with your experts" for m in names}
