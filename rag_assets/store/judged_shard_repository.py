"""Judge shards' outcomes by fingerprint: what lets an evaluation skip the shards whose inputs did not change,
and how a shard step hands its outcome to the merge.

An outcome without judge failures is kept under its fingerprint, for any later run. One with a failed
call is kept only for the run that judged it (under a key of that run's root, so a re-execution of the
merge finds it): the failed call is asked again on the next run (the LLM cache keeps no failure either),
so its shard must be judged again.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from rag_assets.corpus.models import sha256_hex
from rag_assets.scoring.evaluate import EvaluationOutcome
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import JudgedShardRow

SHARD = JudgedShardRow.__table__


def _run_own(fingerprint: str, run_key: str) -> str:
    """The key of an outcome only ``run_key``'s merge may read."""
    return sha256_hex(f"{run_key}/{fingerprint}")


class SqlJudgedShards:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def stored(self, fingerprints: Sequence[str]) -> set[str]:
        """Those of ``fingerprints`` with a kept outcome."""
        with self.engine.connect() as conn:
            return {f for batch in batched(fingerprints)
                    for f in conn.execute(select(SHARD.c.fingerprint).where(SHARD.c.fingerprint.in_(batch))).scalars()}

    def outcomes(self, fingerprints: Sequence[str], run_key: str) -> dict[str, EvaluationOutcome]:
        """By fingerprint, the kept outcomes among ``fingerprints`` and, where none is kept, the one
        ``run_key`` judged with failed calls."""
        wanted = {f: f for f in fingerprints} | {_run_own(f, run_key): f for f in fingerprints}
        query = select(SHARD.c.fingerprint, SHARD.c.outcome_json)
        found: dict[str, EvaluationOutcome] = {}
        with self.engine.connect() as conn:
            for batch in batched(list(wanted)):
                for key, text in conn.execute(query.where(SHARD.c.fingerprint.in_(batch))):
                    if key == wanted[key] or wanted[key] not in found:
                        found[wanted[key]] = EvaluationOutcome.from_json(text)
        return found

    def release(self, fingerprints: Sequence[str], run_key: str) -> None:
        """Drop what ``run_key`` kept for its own merge, once that merge is done (kept outcomes stay)."""
        with write_transaction(self.engine) as conn:
            for batch in batched([_run_own(f, run_key) for f in fingerprints]):
                conn.execute(delete(SHARD).where(SHARD.c.fingerprint.in_(batch)))

    def keep(self, fingerprint: str, outcome: EvaluationOutcome, run_key: str) -> None:
        """Keep ``outcome`` under ``fingerprint``; if a judge call failed in it, only for ``run_key``'s merge
        (replacing what an earlier attempt of that run kept)."""
        row = {"items": len(outcome.items), "outcome_json": outcome.to_json()}
        if outcome.judge_failures:
            own = _run_own(fingerprint, run_key)
            with write_transaction(self.engine) as conn:
                conn.execute(delete(SHARD).where(SHARD.c.fingerprint == own))
                conn.execute(SHARD.insert().values(fingerprint=own, **row))
            return
        try:
            with write_transaction(self.engine) as conn:
                conn.execute(SHARD.insert().values(fingerprint=fingerprint, **row))
        except IntegrityError:
            pass  # another run kept the same shard first: one fingerprint, one outcome
