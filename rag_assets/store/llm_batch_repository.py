"""The journal of submitted LLM batches (implements ``rag_assets.llm.batch.BatchJournal``).

A batch and its custom_id -> call mapping are written in one transaction right after the submit,
so a process that dies while polling leaves a pending batch that the next run resumes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine

from rag_assets.llm.batch import PENDING, BatchRequest
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import LLMBatchRequestRow, LLMBatchRow, utcnow

BATCH = LLMBatchRow.__table__
BATCH_REQUEST = LLMBatchRequestRow.__table__


class SqlBatchJournal:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def pending(self, provider: str, custom_ids: Collection[str]) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        join = BATCH_REQUEST.join(BATCH, BATCH.c.batch_id == BATCH_REQUEST.c.batch_id)
        with self.engine.connect() as conn:
            for chunk in batched(sorted(custom_ids)):
                query = (select(BATCH.c.batch_id, BATCH_REQUEST.c.custom_id).select_from(join)
                         .where(BATCH.c.status == PENDING, BATCH.c.provider == provider,
                                BATCH_REQUEST.c.custom_id.in_(chunk)))
                for batch_id, custom_id in conn.execute(query):
                    found.setdefault(batch_id, set()).add(custom_id)
        return found

    def record(self, batch_id: str, provider: str, model: str, requests: Sequence[BatchRequest]) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(insert(BATCH).values(batch_id=batch_id, provider=provider, model=model,
                                              request_count=len(requests), status=PENDING, submitted_at=utcnow()))
            for chunk in batched(requests):
                conn.execute(insert(BATCH_REQUEST), [
                    {"batch_id": batch_id, "custom_id": r.custom_id, "call_key": r.call_key,
                     "template_ref": r.template_ref} for r in chunk])

    def finish(self, batch_id: str, status: str) -> None:
        with write_transaction(self.engine) as conn:
            conn.execute(update(BATCH).where(BATCH.c.batch_id == batch_id, BATCH.c.status == PENDING)
                         .values(status=status, finished_at=utcnow()))

