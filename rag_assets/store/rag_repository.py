"""RAG runs and their per-item results in the store."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from rag_assets.corpus.models import SnapshotChunk
from rag_assets.evidence.spans import Span
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
    """A named snapshot chunk as ``[chunk_id, score, rank]`` (its text and span are the snapshot's); a
    context given by text as an object that keeps the system's text, ids, source and where it was found."""
    if chunk.chunk_id is not None:
        return [chunk.chunk_id, chunk.score, chunk.rank]
    span = [chunk.span.path, chunk.span.start, chunk.span.end] if chunk.span is not None else None
    row = {"text": chunk.text, "score": chunk.score, "rank": chunk.rank, "id": chunk.own_id, "source": chunk.source,
           "span": span, "mapping": chunk.mapping, "location_score": chunk.location_score}
    return row | ({"elsewhere": [[s.path, s.start, s.end] for s in chunk.elsewhere]} if chunk.elsewhere else {})


def _retrieved(row: list | dict, chunks: Mapping[str, SnapshotChunk]) -> RetrievedChunk:
    """A stored context back. Text contexts stored before spans (with chunk ``matches``) come back
    unlocated: their figures were computed then, and a new evaluation of such a run counts them as misses."""
    if isinstance(row, list):
        chunk_id, score, rank = row
        chunk = chunks.get(chunk_id)
        if chunk is None:
            return RetrievedChunk(chunk_id, "", score, rank)
        return RetrievedChunk(chunk_id, chunk.text, score, rank, source=chunk.path, span=Span.of(chunk))
    span = Span(*row["span"]) if row.get("span") else None
    return RetrievedChunk(None, row["text"], row["score"], row["rank"], own_id=row["id"], source=row["source"],
                          span=span, mapping=row["mapping"] if span is not None else "unmapped",
                          location_score=row.get("location_score"),
                          elsewhere=tuple(Span(*place) for place in row.get("elsewhere", ()) if span is not None))


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
        """The snapshot chunks a run's contexts name, of every item or of ``item_ids``: all a shard or a
        report needs of the snapshot."""
        rows = self._rows(run_id, item_ids, RESULT.c.item_id, RESULT.c.retrieved_json)
        return {context[0] for r in rows for context in json.loads(r["retrieved_json"]) if isinstance(context, list)}

    def results(self, run_id: str, chunks: Mapping[str, SnapshotChunk] | None = None,
                item_ids: Sequence[str] | None = None) -> list[RagResponse]:
        """A run's responses by item id (every item's, or those of ``item_ids``); named chunks get their
        text and span from ``chunks`` (the snapshot's, by id)."""
        rows = self._rows(run_id, item_ids)
        chunks = chunks or {}
        return [RagResponse(
            item_id=r["item_id"], answer=r["answer"],
            retrieved=tuple(_retrieved(row, chunks) for row in json.loads(r["retrieved_json"])),
            citations=tuple(Citation(claim, cid) for claim, cid in json.loads(r["citations_json"])),
            latency_ms=r["latency_ms"], input_tokens=r["input_tokens"], output_tokens=r["output_tokens"],
            cost_usd=r["cost_usd"], error=r["error"], error_kind=r["error_kind"], extra=json.loads(r["extra_json"]),
        ) for r in rows]
