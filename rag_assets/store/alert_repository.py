"""Alert records of failed runs."""

from __future__ import annotations

import json

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from rag_assets.alerts import Alert
from rag_assets.store.engine import write_transaction
from rag_assets.store.tables import AlertRow

ALERT = AlertRow.__table__


class SqlAlertRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, alert: Alert) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(insert(ALERT).values(run_id=alert.run_id, job=alert.job, partition=alert.partition,
                                              summary=alert.summary, errors_json=json.dumps(list(alert.errors)),
                                              created_at=alert.created_at))

    def all(self) -> list[Alert]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(ALERT).order_by(ALERT.c.alert_id)).mappings().all()
        return [Alert(r["run_id"], r["job"], r["partition"], r["summary"], tuple(json.loads(r["errors_json"])),
                      r["created_at"]) for r in rows]
