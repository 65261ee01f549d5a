"""RAG runs and their per-item results in the store."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from rag_assets.corpus.mapping import ChunkMatch
from rag_assets.rag.models import Citation, RagResponse, RetrievedChunk
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import RagResultRow, RagRunRow

RUN = RagRunRow.__table__
RESULT = RagResultRow.__table__


@dataclass(frozen=True)
class RagRun:
    run_id: str
    corpus_version: str
    golden_version: int
    system_name: str
    system_config_hash: str
    system_config: dict
    items: int
    errors: int


def _retrieved_row(chunk: RetrievedChunk) -> list | dict:
    """A named snapshot chunk as ``[chunk_id, score, rank]`` (its text is the snapshot's); a context
    given by text as an object that keeps the system's text, ids, source and mapping."""
    if chunk.chunk_id is not None:
        return [chunk.chunk_id, chunk.score, chunk.rank]
    return {"text": chunk.text, "score": chunk.score, "rank": chunk.rank, "id": chunk.own_id, "source": chunk.source,
            "matches": [[m.chunk_id, m.coverage] for m in chunk.matches], "mapping": chunk.mapping}


def _retrieved(row: list | dict, texts: Mapping[str, str]) -> RetrievedChunk:
    if isinstance(row, list):
        chunk_id, score, rank = row
        return RetrievedChunk(chunk_id, texts.get(chunk_id, ""), score, rank)
    return RetrievedChunk(None, row["text"], row["score"], row["rank"], own_id=row["id"], source=row["source"],
                          matches=tuple(ChunkMatch(chunk_id, coverage) for chunk_id, coverage in row["matches"]),
                          mapping=row["mapping"])


class SqlRagRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save_run(self, corpus_version: str, golden_version: int, system_name: str, config_hash: str,
                 config: dict, responses: Sequence[RagResponse], revisions: Mapping[str, int]) -> RagRun:
        run = RagRun(f"rr-{uuid.uuid4().hex[:20]}", corpus_version, golden_version, system_name, config_hash, config,
                     len(responses), sum(1 for r in responses if not r.ok))
        rows = [{
            "run_id": run.run_id, "item_id": r.item_id, "item_revision": revisions[r.item_id], "answer": r.answer,
            "retrieved_json": json.dumps([_retrieved_row(c) for c in r.retrieved]),
            "citations_json": json.dumps([[c.claim, c.chunk_id] for c in r.citations]),
            "latency_ms": r.latency_ms, "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
            "cost_usd": r.cost_usd, "error": r.error, "error_kind": r.error_kind,
            "extra_json": json.dumps(r.extra, default=str),
        } for r in responses]
        with write_transaction(self.engine) as conn:
            conn.execute(insert(RUN).values(
                run_id=run.run_id, corpus_version=corpus_version, golden_version=golden_version,
                system_name=system_name, system_config_hash=config_hash,
                system_config_json=json.dumps(config, sort_keys=True, default=str), items=run.items, errors=run.errors))
            for batch in batched(rows):
                conn.execute(insert(RESULT), batch)
        return run

    def latest_run(self, corpus_version: str, system_name: str | None = None) -> RagRun | None:
        query = select(RUN).where(RUN.c.corpus_version == corpus_version)
        if system_name is not None:
            query = query.where(RUN.c.system_name == system_name)
        with self.engine.connect() as conn:
            row = conn.execute(query.order_by(RUN.c.created_at.desc()).limit(1)).mappings().first()
        return None if row is None else self._run(row)

    def run(self, run_id: str) -> RagRun | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(RUN).where(RUN.c.run_id == run_id)).mappings().first()
        return None if row is None else self._run(row)

    @staticmethod
    def _run(row) -> RagRun:
        return RagRun(row["run_id"], row["corpus_version"], row["golden_version"], row["system_name"],
                      row["system_config_hash"], json.loads(row["system_config_json"]), row["items"], row["errors"])

    def _rows(self, run_id: str, item_ids: Sequence[str] | None, *columns) -> list:
        """A run's result rows by item id: every one, or those of ``item_ids`` (by item id within each batch of ids)."""
        query = select(*columns or (RESULT,)).where(RESULT.c.run_id == run_id).order_by(RESULT.c.item_id)
        with self.engine.connect() as conn:
            if item_ids is None:
                return list(conn.execute(query).mappings())
            return [r for batch in batched(item_ids)
                    for r in conn.execute(query.where(RESULT.c.item_id.in_(batch))).mappings()]

    def chunk_ids(self, run_id: str, item_ids: Sequence[str] | None = None) -> set[str]:
        """The snapshot chunks a run's contexts stand for (named or mapped onto), of every item or of
        ``item_ids``: all a shard or a report needs of the snapshot."""
        rows = self._rows(run_id, item_ids, RESULT.c.item_id, RESULT.c.retrieved_json)
        return {cid for r in rows for context in json.loads(r["retrieved_json"])
                for cid in ([context[0]] if isinstance(context, list) else [m[0] for m in context["matches"]])}

    def results(self, run_id: str, texts: Mapping[str, str] | None = None,
                item_ids: Sequence[str] | None = None) -> list[RagResponse]:
        """A run's responses by item id (every item's, or those of ``item_ids``); chunk texts are filled
        from ``texts`` (the snapshot)."""
        rows = self._rows(run_id, item_ids)
        texts = texts or {}
        return [RagResponse(
            item_id=r["item_id"], answer=r["answer"],
            retrieved=tuple(_retrieved(row, texts) for row in json.loads(r["retrieved_json"])),
            citations=tuple(Citation(claim, cid) for claim, cid in json.loads(r["citations_json"])),
            latency_ms=r["latency_ms"], input_tokens=r["input_tokens"], output_tokens=r["output_tokens"],
            cost_usd=r["cost_usd"], error=r["error"], error_kind=r["error_kind"], extra=json.loads(r["extra_json"]),
        ) for r in rows]
