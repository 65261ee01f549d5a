"""Question candidates in the store."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from rag_assets.corpus.models import ChunkRef
from rag_assets.generation.models import Candidate
from rag_assets.store.engine import batched, write_transaction
from rag_assets.store.tables import CandidateChunkRow, CandidateRow

CANDIDATE = CandidateRow.__table__
CANDIDATE_CHUNK = CandidateChunkRow.__table__


class SqlCandidateRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def covered_chunk_ids(self, excluding_version: str | None = None) -> set[str]:
        """Chunks that candidates were generated from (of other corpus versions, if one is named)."""
        query = (select(CANDIDATE_CHUNK.c.chunk_id).distinct()
                 .join(CANDIDATE, CANDIDATE.c.candidate_id == CANDIDATE_CHUNK.c.candidate_id)
                 .where(CANDIDATE_CHUNK.c.role == "source"))
        if excluding_version is not None:
            query = query.where(CANDIDATE.c.corpus_version != excluding_version)
        with self.engine.connect() as conn:
            return set(conn.execute(query).scalars())

    def questions(self, excluding_version: str | None = None) -> list[str]:
        query = select(CANDIDATE.c.question).order_by(CANDIDATE.c.created_at, CANDIDATE.c.candidate_id)
        if excluding_version is not None:
            query = query.where(CANDIDATE.c.corpus_version != excluding_version)
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def save(self, candidates: Sequence[Candidate]) -> int:
        """Insert candidates not stored yet (ids are content hashes); returns how many were new."""
        with write_transaction(self.engine) as conn:
            known = set()
            for batch in batched([c.candidate_id for c in candidates]):
                known |= set(conn.execute(select(CANDIDATE.c.candidate_id).where(
                    CANDIDATE.c.candidate_id.in_(batch))).scalars())
            new = [c for c in candidates if c.candidate_id not in known]
            rows = [{"candidate_id": c.candidate_id, "corpus_version": c.corpus_version,
                     "question_type": c.question_type, "question": c.question,
                     "reference_answer": c.reference_answer, "provider": c.provider, "model": c.model,
                     "prompt_ref": c.prompt_ref, "origin_item_id": c.origin_item_id,
                     "change_note": c.change_note or None} for c in new]
            links = [{"candidate_id": c.candidate_id, "role": role, "chunk_id": ref.chunk_id,
                      "content_hash": ref.content_hash, "position": position}
                     for c in new for role, refs in (("relevant", c.relevant_chunks), ("source", c.source_chunks))
                     for position, ref in enumerate(refs)]
            for table, payload in ((CANDIDATE, rows), (CANDIDATE_CHUNK, links)):
                for batch in batched(payload):
                    conn.execute(insert(table), batch)
        return len(new)

    def for_version(self, corpus_version: str, status: str | None = None) -> list[Candidate]:
        """Candidates of a corpus version (optionally only those with ``status``), by id."""
        query = select(CANDIDATE).where(CANDIDATE.c.corpus_version == corpus_version)
        if status is not None:
            query = query.where(CANDIDATE.c.status == status)
        return self._load(query.order_by(CANDIDATE.c.candidate_id))

    def by_ids(self, candidate_ids: Sequence[str]) -> dict[str, Candidate]:
        found: dict[str, Candidate] = {}
        for batch in batched(sorted(set(candidate_ids))):
            found.update({c.candidate_id: c for c in self._load(select(CANDIDATE).where(CANDIDATE.c.candidate_id.in_(batch)))})
        return found

    def corpus_versions_by_id(self) -> dict[str, str]:
        """Every candidate id with the corpus version it was generated for (what a review may name)."""
        with self.engine.connect() as conn:
            return dict(conn.execute(select(CANDIDATE.c.candidate_id, CANDIDATE.c.corpus_version)).all())

    def _load(self, query) -> list[Candidate]:
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
            ids = [r["candidate_id"] for r in rows]
            refs: dict[tuple[str, str], list[tuple[int, ChunkRef]]] = {}
            for batch in batched(ids):
                for link in conn.execute(select(CANDIDATE_CHUNK).where(CANDIDATE_CHUNK.c.candidate_id.in_(batch))).mappings():
                    refs.setdefault((link["candidate_id"], link["role"]), []).append(
                        (link["position"], ChunkRef(link["chunk_id"], link["content_hash"])))

        def ordered(candidate_id: str, role: str) -> tuple[ChunkRef, ...]:
            return tuple(ref for _, ref in sorted(refs.get((candidate_id, role), []), key=lambda p: p[0]))

        return [Candidate(
            candidate_id=r["candidate_id"], question=r["question"], reference_answer=r["reference_answer"],
            question_type=r["question_type"], relevant_chunks=ordered(r["candidate_id"], "relevant"),
            source_chunks=ordered(r["candidate_id"], "source"), corpus_version=r["corpus_version"],
            provider=r["provider"], model=r["model"], prompt_ref=r["prompt_ref"],
            origin_item_id=r["origin_item_id"], change_note=r["change_note"] or "") for r in rows]
