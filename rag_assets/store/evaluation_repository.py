"""Evaluations (the history) and their per-item scores."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine

from rag_assets.scoring.evaluate import ItemScores
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import EvaluationRow, EvaluationScoreRow, JudgeReviewSampleRow

EVALUATION = EvaluationRow.__table__
SCORE = EvaluationScoreRow.__table__
REVIEW_SAMPLE = JudgeReviewSampleRow.__table__


@dataclass(frozen=True)
class EvaluationRecord:
    evaluation_id: str
    corpus_version: str
    golden_version: int
    rag_run_id: str
    system_name: str
    system_config_hash: str
    judge: str
    k: int
    aggregates: dict
    gates: dict
    passed: bool
    baseline_id: str | None
    report_path: str | None
    created_at: str


def score_rows(items: Iterable[ItemScores]) -> Iterator[dict]:
    """One row per item and metric: each value or judge failure, the RAG error, the hallucination counts.

    Evaluations and production days store scores alike, so a reader of either table finds the
    same rows for the same outcome. A generator: about twenty rows per item, inserted batch by batch
    rather than held all at once (10,000 items make 200,000 rows).
    """
    for item in items:
        base = {"item_id": item.item_id, "item_revision": item.revision, "question_type": item.question_type}
        yield from ({**base, "metric": metric, "value": item.values.get(metric), "failure": item.failures.get(metric)}
                    for metric in sorted(set(item.values) | set(item.failures)))
        if item.rag_error:
            yield {**base, "metric": "rag_error", "value": None, "failure": item.rag_error}
        yield from ({**base, "metric": f"claims_{verdict}", "value": float(count), "failure": None}
                    for verdict, count in item.hallucinations.items())


class SqlEvaluationRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, *, corpus_version: str, golden_version: int, rag_run_id: str, system_name: str,
             system_config_hash: str, judge: str, k: int, aggregates: Mapping, gates: Mapping, passed: bool,
             baseline_id: str | None, items: list[ItemScores]) -> str:
        evaluation_id = f"ev-{uuid.uuid4().hex[:20]}"
        rows = ({"evaluation_id": evaluation_id, **row} for row in score_rows(items))
        with write_transaction(self.engine) as conn:
            conn.execute(insert(EVALUATION).values(
                evaluation_id=evaluation_id, corpus_version=corpus_version, golden_version=golden_version,
                rag_run_id=rag_run_id, system_name=system_name, system_config_hash=system_config_hash, judge=judge,
                k=k, aggregates_json=json.dumps(aggregates), gates_json=json.dumps(gates, default=str), passed=passed,
                baseline_id=baseline_id))
            for batch in batched(rows):
                conn.execute(insert(SCORE), batch)
        return evaluation_id

    @contextmanager
    def discarded_on_failure(self, evaluation_id: str, files: list[Path]) -> Iterator[None]:
        """Within the block the saved evaluation is finished (its review sample recorded, its report written and
        published, each file it writes added to ``files``); if the block fails, the evaluation, its scores, its
        review sample and those files are removed, so a failed step leaves no half-saved evaluation behind."""
        try:
            yield
        except BaseException:
            with write_transaction(self.engine) as conn:
                for table in (REVIEW_SAMPLE, SCORE, EVALUATION):
                    conn.execute(delete(table).where(table.c.evaluation_id == evaluation_id))
            for path in files:
                path.unlink(missing_ok=True)
            raise

    def set_report_path(self, evaluation_id: str, path: str) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(update(EVALUATION).where(EVALUATION.c.evaluation_id == evaluation_id).values(report_path=path))

    def get(self, evaluation_id: str) -> EvaluationRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(EVALUATION).where(EVALUATION.c.evaluation_id == evaluation_id)).mappings().first()
        return None if row is None else self._record(row)

    def history(self, corpus_versions: list[str] | None = None, limit: int = 200) -> list[EvaluationRecord]:
        """Evaluations, oldest first (of the given corpus versions, if any)."""
        query = select(EVALUATION).order_by(EVALUATION.c.created_at.desc()).limit(limit)
        if corpus_versions is not None:
            query = query.where(EVALUATION.c.corpus_version.in_(corpus_versions))
        with self.engine.connect() as conn:
            return [self._record(r) for r in reversed(conn.execute(query).mappings().all())]

    def latest_passing(self, corpus_versions: list[str], system_name: str | None = None) -> EvaluationRecord | None:
        for record in reversed(self.history(corpus_versions)):
            if record.passed and (system_name is None or record.system_name == system_name):
                return record
        return None

    @staticmethod
    def _record(row) -> EvaluationRecord:
        return EvaluationRecord(row["evaluation_id"], row["corpus_version"], row["golden_version"], row["rag_run_id"],
                                row["system_name"], row["system_config_hash"], row["judge"], row["k"],
                                json.loads(row["aggregates_json"]), json.loads(row["gates_json"]), bool(row["passed"]),
                                row["baseline_id"], row["report_path"], row["created_at"].isoformat())

    def item_values(self, evaluation_id: str) -> tuple[dict[tuple[str, int], dict[str, float]], dict[tuple[str, int], str]]:
        """``(item_id, revision) -> {metric: value}`` of the defined values, and each item's question type."""
        values: dict[tuple[str, int], dict[str, float]] = {}
        types: dict[tuple[str, int], str] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(select(SCORE).where(SCORE.c.evaluation_id == evaluation_id)).mappings():
                key = (row["item_id"], row["item_revision"])
                types[key] = row["question_type"]
                if row["value"] is not None and not row["metric"].startswith("claims_"):
                    values.setdefault(key, {})[row["metric"]] = row["value"]
        return values, types
