"""Judge reviews: the samples sent to experts, their verdicts, and the judge's calibration against them."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection, Engine

from rag_assets.calibration.models import (
    UNRECORDED_JUDGE, ExpertVerdict, JudgeConfig, JudgeReview, ReviewItem, StoredCalibration, same_judge, verdict,
)
from rag_assets.calibration.stats import MetricCalibration
from rag_assets.store.engine import write_transaction
from rag_assets.store.tables import ExpertVerdictRow, JudgeCalibrationRow, JudgeReviewImportRow, JudgeReviewSampleRow

SAMPLE = JudgeReviewSampleRow.__table__
IMPORT = JudgeReviewImportRow.__table__
VERDICT = ExpertVerdictRow.__table__
CALIBRATION = JudgeCalibrationRow.__table__


@dataclass
class ReviewApplied:
    """What applying a judge-review file did: its verdicts, and the calibration of its judge configuration
    recomputed over every verdict on that judge, in the same transaction (``judge`` None: already applied)."""

    already_applied: bool = False
    verdicts: int = 0
    unreviewed: int = 0
    judge: JudgeConfig | None = None
    calibration: tuple[MetricCalibration, ...] = ()


#: Measures a judge configuration's agreement with every expert verdict on it (``calibration.stats.calibrate_all``).
Calibrate = Callable[[Sequence[ExpertVerdict]], Sequence[MetricCalibration]]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


class SqlCalibrationRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record_sample(self, evaluation_id: str, config: JudgeConfig, items: Sequence[ReviewItem],
                      file_name: str | None) -> None:
        judged = {i.item_id: {m: None if v is None else verdict(v) for m, v in i.scores.items()} for i in items}
        with write_transaction(self.engine) as conn:
            conn.execute(insert(SAMPLE).values(evaluation_id=evaluation_id, judge_config=config.key,
                                               judge_config_json=config.as_json(), items_json=json.dumps(judged),
                                               file_name=file_name))

    def sample(self, evaluation_id: str) -> tuple[str, dict[str, dict[str, str | None]]] | None:
        """(judge configuration key, item id -> metric -> the judge's verdict) of an evaluation's sample."""
        with self.engine.connect() as conn:
            row = conn.execute(select(SAMPLE).where(SAMPLE.c.evaluation_id == evaluation_id)).mappings().first()
        return None if row is None else (row["judge_config"], json.loads(row["items_json"]))

    def judge_keys(self, evaluation_ids: Collection[str]) -> dict[str, str]:
        """The judge configuration key (``JudgeConfig.key``) each of ``evaluation_ids`` was scored with, as its
        sample recorded it; an evaluation saved before judge configurations were recorded is not in it."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(SAMPLE.c.evaluation_id, SAMPLE.c.judge_config)
                                .where(SAMPLE.c.evaluation_id.in_(list(evaluation_ids)))).all()
        return {evaluation_id: key for evaluation_id, key in rows}

    def scored_elsewhere(self, evaluation_ids: Collection[str], judge_key: str) -> dict[str, str]:
        """Those of ``evaluation_ids`` that another judge configuration than ``judge_key`` scored, or one never
        recorded (``UNRECORDED_JUDGE``), with that configuration's key: their judge-scored metrics are not
        comparable with this judge's (``calibration.models.same_judge``)."""
        keys = self.judge_keys(evaluation_ids)
        return {e: keys.get(e, UNRECORDED_JUDGE) for e in evaluation_ids if not same_judge(keys.get(e), judge_key)}

    def current_config(self) -> JudgeConfig | None:
        """The judge configuration of the newest evaluation that sent a sample: the one in use now."""
        with self.engine.connect() as conn:
            row = conn.execute(select(SAMPLE.c.judge_config_json).order_by(SAMPLE.c.created_at.desc())
                               .limit(1)).first()
        return None if row is None else JudgeConfig.from_json(row[0])

    def config(self, key: str) -> JudgeConfig | None:
        with self.engine.connect() as conn:
            return self._config(conn, key)

    @staticmethod
    def _config(conn: Connection, key: str) -> JudgeConfig | None:
        row = conn.execute(select(SAMPLE.c.judge_config_json).where(SAMPLE.c.judge_config == key).limit(1)).first()
        return None if row is None else JudgeConfig.from_json(row[0])

    def apply_review(self, review: JudgeReview, calibrate: Calibrate) -> ReviewApplied:
        """Store every verdict of a validated file and the calibration ``calibrate`` measures over every verdict on
        its judge configuration then, in one transaction: the import, its verdicts and the calibration are stored
        together or not at all. A file already applied adds nothing. A reviewer's verdict replaces their earlier one
        on the same item and metric of the evaluation (a corrected file sent again), so no verdict is counted twice."""
        with write_transaction(self.engine) as conn:
            if conn.execute(select(IMPORT.c.sha256).where(IMPORT.c.sha256 == review.sha256)).first():
                return ReviewApplied(already_applied=True)
            conn.execute(insert(IMPORT).values(sha256=review.sha256, file_name=Path(review.path).name,
                                               evaluation_id=review.evaluation_id, verdicts=len(review.verdicts)))
            for v in review.verdicts:
                conn.execute(delete(VERDICT).where(
                    VERDICT.c.evaluation_id == review.evaluation_id, VERDICT.c.item_id == v.item_id,
                    VERDICT.c.metric == v.metric, VERDICT.c.reviewer == v.reviewer))
            if review.verdicts:
                conn.execute(insert(VERDICT), [
                    {"evaluation_id": review.evaluation_id, "judge_config": review.judge_config, "item_id": v.item_id,
                     "metric": v.metric, "judge_verdict": v.judge_verdict, "expert_verdict": v.expert_verdict,
                     "reviewer": v.reviewer, "notes": v.notes, "source_sha256": review.sha256, "source_row": v.row}
                    for v in review.verdicts])
            judge = self._config(conn, review.judge_config)
            measured = tuple(calibrate(self._verdicts(conn, review.judge_config)))
            _save_calibration(conn, judge, measured)
        return ReviewApplied(verdicts=len(review.verdicts), unreviewed=review.unreviewed, judge=judge,
                             calibration=measured)

    def verdicts(self, config_key: str) -> list[ExpertVerdict]:
        """Every expert verdict on items this judge configuration judged, in import order."""
        with self.engine.connect() as conn:
            return self._verdicts(conn, config_key)

    @staticmethod
    def _verdicts(conn: Connection, config_key: str) -> list[ExpertVerdict]:
        rows = conn.execute(select(VERDICT).where(VERDICT.c.judge_config == config_key)
                            .order_by(VERDICT.c.verdict_id)).mappings().all()
        return [ExpertVerdict(r["item_id"], r["metric"], r["judge_verdict"], r["expert_verdict"], r["reviewer"],
                              r["notes"], r["source_row"]) for r in rows]

    def configs_with_verdicts(self) -> list[str]:
        with self.engine.connect() as conn:
            return sorted(r[0] for r in conn.execute(select(VERDICT.c.judge_config).distinct()))

    def calibration(self, config: JudgeConfig) -> dict[str, StoredCalibration]:
        """Metric -> the newest calibration of this judge configuration (empty: never calibrated)."""
        query = select(CALIBRATION).where(CALIBRATION.c.judge_config == config.key).order_by(CALIBRATION.c.calibration_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return {r["metric"]: StoredCalibration(
            JudgeConfig.from_json(r["judge_config_json"]), r["metric"], r["n"], r["accuracy"], r["kappa"],
            r["kappa_low"], r["kappa_high"], r["created_at"].isoformat()) for r in rows}

    def last_calibrated_config(self) -> JudgeConfig | None:
        """The judge configuration of the newest calibration of any."""
        with self.engine.connect() as conn:
            row = conn.execute(select(CALIBRATION.c.judge_config_json).order_by(CALIBRATION.c.calibration_id.desc())
                               .limit(1)).first()
        return None if row is None else JudgeConfig.from_json(row[0])


def _save_calibration(conn: Connection, config: JudgeConfig, results: Sequence[MetricCalibration]) -> None:
    """One calibration row per measured metric (none measured: nothing to store)."""
    if results:
        conn.execute(insert(CALIBRATION), [
            {"judge_config": config.key, "judge_config_json": config.as_json(), "metric": r.metric, "n": r.n,
             "accuracy": r.accuracy, "kappa": _finite(r.kappa.value), "kappa_low": _finite(r.kappa.low),
             "kappa_high": _finite(r.kappa.high), "confusion_json": json.dumps(r.confusion),
             "disagreements_json": json.dumps([asdict(d) for d in r.disagreements])} for r in results])
