"""Send an evaluation's judge review to the experts: the stratified sample, written to the outbox and recorded.

The evaluation use case calls it inside the block that discards a failed evaluation, so the files it writes
are listed in ``ReviewSent.files`` for removal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_assets.calibration.models import REVIEWED_METRICS, JudgeConfig, ReviewItem, calibration_lines
from rag_assets.calibration.review_file import write_judge_review
from rag_assets.calibration.sample import DEFAULT_SEED, reviewable, stratified_sample
from rag_assets.golden.models import GoldenItem
from rag_assets.rag.models import RagResponse
from rag_assets.scoring.evaluate import ItemScores
from rag_assets.store.calibration_repository import SqlCalibrationRepository


@dataclass(frozen=True)
class ReviewSent:
    """The judge review of one evaluation: per reviewed metric the calibration text the report shows beside it,
    the sampled items and the workbook and CSV written (None when the sample was empty)."""

    calibration: dict[str, str]
    sample: tuple[ReviewItem, ...]
    files: tuple[Path, Path] | None


def send_judge_review(calibrations: SqlCalibrationRepository, outbox: Path, evaluation_id: str, config: JudgeConfig,
                      outcome_items: Sequence[ItemScores], items: Sequence[GoldenItem],
                      responses: Mapping[str, RagResponse], size: int) -> ReviewSent:
    """Write up to ``size`` judged items (0: none) to ``outbox`` and record the sample, even when empty: the
    newest evaluation's judge is the one the calibration check compares."""
    lines = calibration_lines(calibrations.calibration(config), REVIEWED_METRICS)
    sample = stratified_sample(reviewable(outcome_items, {i.item_id: i for i in items}, responses), size, DEFAULT_SEED)
    files = write_judge_review(sample, evaluation_id, config, outbox) if sample else None
    calibrations.record_sample(evaluation_id, config, sample, files[0].name if files else None)
    return ReviewSent(lines, tuple(sample), files)
