"""Judge shards' outcomes by fingerprint: what lets an evaluation skip the shards whose inputs did not change.

Only an outcome without judge failures is kept: a failed call is asked again on the next run (the
LLM cache keeps no failure either), so its shard must be judged again.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from rag_assets.scoring.evaluate import EvaluationOutcome
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import JudgedShardRow

SHARD = JudgedShardRow.__table__


class SqlJudgedShards:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def stored(self, fingerprints: Sequence[str]) -> set[str]:
        """Those of ``fingerprints`` with a kept outcome."""
        with self.engine.connect() as conn:
            return {f for batch in batched(fingerprints)
                    for f in conn.execute(select(SHARD.c.fingerprint).where(SHARD.c.fingerprint.in_(batch))).scalars()}

    def outcomes(self, fingerprints: Sequence[str]) -> dict[str, EvaluationOutcome]:
        """The kept outcomes among ``fingerprints``, by fingerprint."""
        query = select(SHARD.c.fingerprint, SHARD.c.outcome_json)
        with self.engine.connect() as conn:
            return {f: EvaluationOutcome.from_json(text) for batch in batched(fingerprints)
                    for f, text in conn.execute(query.where(SHARD.c.fingerprint.in_(batch)))}

    def keep(self, fingerprint: str, outcome: EvaluationOutcome) -> None:
        """Keep ``outcome`` under ``fingerprint``, unless a judge call failed in it."""
        if outcome.judge_failures:
            return
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(SHARD.insert().values(fingerprint=fingerprint, items=len(outcome.items),
                                                   outcome_json=outcome.to_json()))
        except IntegrityError:
            pass  # another run kept the same shard first: one fingerprint, one outcome
