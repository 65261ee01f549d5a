"""Scored production days: one run row per scoring of a day, and its per-query scores.

A day may be scored again (a new log file arrived, the judge changed); every scoring is kept and
the newest one speaks for the day, so no score is ever overwritten.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from rag_assets.scoring.evaluate import ItemScores
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.evaluation_repository import score_rows
from rag_assets.store.tables import ProductionRunRow, ProductionScoreRow

RUN = ProductionRunRow.__table__
SCORE = ProductionScoreRow.__table__


@dataclass(frozen=True)
class ProductionDay:
    run_id: str
    day: date
    judge: str
    judge_key: str | None  # the JudgeConfig key (None: scored before it was recorded)
    records: int
    bad_lines: int
    sample_size: int
    aggregates: dict  # metric -> {"mean", "std", "n", "failures"}


class SqlProductionRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, *, day: date, judge: str, judge_key: str, records: int, bad_lines: int, aggregates: Mapping,
             items: Sequence[ItemScores]) -> str:
        run_id = f"pd-{uuid.uuid4().hex[:20]}"
        rows = [{"run_id": run_id, "item_id": row["item_id"], "metric": row["metric"], "value": row["value"],
                 "failure": row["failure"]} for row in score_rows(items)]
        with write_transaction(self.engine) as conn:
            conn.execute(insert(RUN).values(run_id=run_id, day=day.isoformat(), judge=judge, judge_key=judge_key,
                                            records=records, bad_lines=bad_lines, sample_size=len(items),
                                            aggregates_json=json.dumps(aggregates)))
            for batch in batched(rows):
                conn.execute(insert(SCORE), batch)
        return run_id

    def days(self, before: date, window: int) -> list[ProductionDay]:
        """The newest scoring of each of the ``window`` days before ``before``, oldest day first."""
        first = (before - timedelta(days=window)).isoformat()
        query = (select(RUN).where(RUN.c.day >= first, RUN.c.day < before.isoformat())
                 .order_by(RUN.c.day, RUN.c.created_at))
        with self.engine.connect() as conn:
            newest = {row["day"]: row for row in conn.execute(query).mappings()}
        return [ProductionDay(r["run_id"], date.fromisoformat(r["day"]), r["judge"], r["judge_key"], r["records"],
                              r["bad_lines"], r["sample_size"], json.loads(r["aggregates_json"]))
                for r in newest.values()]

    def values(self, runs: Sequence[ProductionDay], metric: str) -> dict[date, list[float]]:
        """Per day, the defined values of ``metric`` in the given scorings."""
        by_run = {run.run_id: run.day for run in runs}
        found: dict[date, list[float]] = {run.day: [] for run in runs}
        with self.engine.connect() as conn:
            for batch in batched(list(by_run)):
                query = (select(SCORE.c.run_id, SCORE.c.value)
                         .where(SCORE.c.run_id.in_(batch), SCORE.c.metric == metric, SCORE.c.value.is_not(None))
                         .order_by(SCORE.c.run_id, SCORE.c.item_id))
                for run_id, value in conn.execute(query):
                    found[by_run[run_id]].append(value)
        return found
