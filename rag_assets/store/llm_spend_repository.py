"""The ledger of LLM spend (implements ``rag_assets.llm.budget.SpendLedger``).

One row per paid request, so the shard steps of one run, in whatever process, add up to the run's spend.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from rag_assets.store.engine import write_transaction
from rag_assets.store.tables import LLMSpendRow

SPEND = LLMSpendRow.__table__


class SqlSpendLedger:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, run_id: str, scope: str, cost_usd: float) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(SPEND.insert().values(run_id=run_id, scope=scope, cost_usd=cost_usd))

    def spent(self, run_id: str, scope: str | None = None) -> float:
        query = select(func.coalesce(func.sum(SPEND.c.cost_usd), 0.0)).where(SPEND.c.run_id == run_id)
        if scope is not None:
            query = query.where(SPEND.c.scope == scope)
        with self.engine.connect() as conn:
            return float(conn.execute(query).scalar_one())
