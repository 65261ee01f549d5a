"""Golden items, their revisions, and golden-set versions in the store.

Item writes are functions of an open connection so that applying a review file (decisions,
candidate statuses, items, revisions) is one transaction with the caller's other writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from rag_assets.corpus.models import ChunkRef, sha256_hex
from rag_assets.evidence.spans import EvidenceSpan
from rag_assets.golden.build import GoldenBuild, GoldenDiff
from rag_assets.golden.models import GoldenItem
from rag_assets.store.engine import batched, retry_transaction, write_transaction
from rag_assets.store.tables import GoldenItemRevisionRow, GoldenItemRow, GoldenVersionItemRow, GoldenVersionRow, utcnow

ITEM = GoldenItemRow.__table__
REVISION = GoldenItemRevisionRow.__table__
VERSION = GoldenVersionRow.__table__
MEMBER = GoldenVersionItemRow.__table__


def refs_to_json(refs: Sequence[ChunkRef]) -> str:
    return json.dumps([[r.chunk_id, r.content_hash] for r in refs])


def refs_from_json(text: str) -> tuple[ChunkRef, ...]:
    return tuple(ChunkRef(chunk_id, digest) for chunk_id, digest in json.loads(text))


def evidence_to_json(evidence: Sequence[EvidenceSpan]) -> str | None:
    return json.dumps([e.to_json() for e in evidence]) if evidence else None


def evidence_from_json(text: str | None) -> tuple[EvidenceSpan, ...]:
    return tuple(EvidenceSpan.from_json(data) for data in json.loads(text)) if text else ()


def item_state(conn: Connection, item_id: str) -> dict | None:
    return conn.execute(select(ITEM).where(ITEM.c.item_id == item_id)).mappings().first()


def add_revision(conn: Connection, item_id: str, *, question: str, answer: str, refs: Sequence[ChunkRef],
                 corpus_version: str, decision_id: int | None, question_type: str, origin: str,
                 evidence: Sequence[EvidenceSpan] = ()) -> int:
    """Append a revision (creating the item at revision 1) and make it current and accepted."""
    state = item_state(conn, item_id)
    revision = 1 if state is None else state["current_revision"] + 1
    if state is None:
        conn.execute(insert(ITEM).values(item_id=item_id, question_type=question_type, origin=origin,
                                         status="accepted", current_revision=1))
    conn.execute(insert(REVISION).values(item_id=item_id, revision=revision, question=question, reference_answer=answer,
                                         relevant_chunks_json=refs_to_json(refs), corpus_version=corpus_version,
                                         decision_id=decision_id, evidence_json=evidence_to_json(evidence)))
    set_status(conn, item_id, "accepted", current_revision=revision)
    return revision


def current_content(conn: Connection, item_id: str) -> tuple[str, str]:
    """The question and reference answer of an item's current revision."""
    row = conn.execute(select(REVISION.c.question, REVISION.c.reference_answer)
                       .join(ITEM, (ITEM.c.item_id == REVISION.c.item_id) & (ITEM.c.current_revision == REVISION.c.revision))
                       .where(ITEM.c.item_id == item_id)).one()
    return row.question, row.reference_answer


def set_status(conn: Connection, item_id: str, status: str, current_revision: int | None = None) -> None:
    values = {"status": status, "updated_at": utcnow()}
    if current_revision is not None:
        values["current_revision"] = current_revision
    conn.execute(update(ITEM).where(ITEM.c.item_id == item_id).values(**values))


def set_origin(conn: Connection, item_id: str, origin: str) -> None:
    """Where an item comes from, as it changes: a trial's unreviewed item once an expert decided it."""
    conn.execute(update(ITEM).where(ITEM.c.item_id == item_id).values(origin=origin, updated_at=utcnow()))


def _item_query():
    return (select(ITEM.c.item_id, ITEM.c.question_type, ITEM.c.origin, REVISION.c.revision, REVISION.c.question,
                   REVISION.c.reference_answer, REVISION.c.relevant_chunks_json, REVISION.c.corpus_version,
                   REVISION.c.reference_statements_json, REVISION.c.evidence_json)
            .join(REVISION, REVISION.c.item_id == ITEM.c.item_id))


def _to_item(row) -> GoldenItem:
    statements = tuple(json.loads(row.reference_statements_json)) if row.reference_statements_json else ()
    return GoldenItem(item_id=row.item_id, revision=row.revision, question_type=row.question_type,
                      question=row.question, reference_answer=row.reference_answer,
                      relevant_chunks=refs_from_json(row.relevant_chunks_json), corpus_version=row.corpus_version,
                      origin=row.origin, reference_statements=statements,
                      evidence=evidence_from_json(row.evidence_json))


def _pinned(row) -> GoldenItem:
    """An item as a version pinned it: its version's corpus version, and the spans and chunks the version
    keeps for it where its evidence moved."""
    item = replace(_to_item(row), corpus_version=row.pinned)
    if row.pinned_chunks is None:
        return item
    return replace(item, evidence=evidence_from_json(row.pinned_evidence),
                   relevant_chunks=refs_from_json(row.pinned_chunks))


@dataclass(frozen=True)
class GoldenVersion:
    number: int
    corpus_version: str
    content_hash: str
    parent_number: int | None
    item_count: int
    diff: GoldenDiff
    created: bool = False


class SqlGoldenRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def accepted_items(self, corpus_versions: Sequence[str] | None = None) -> list[GoldenItem]:
        """Current revisions of accepted items (created for one of ``corpus_versions``, if given)."""
        query = _item_query().where(ITEM.c.status == "accepted", REVISION.c.revision == ITEM.c.current_revision)
        if corpus_versions is not None:
            query = query.where(REVISION.c.corpus_version.in_(list(corpus_versions)))
        with self.engine.connect() as conn:
            return [_to_item(row) for row in conn.execute(query.order_by(ITEM.c.item_id))]

    def accepted_digest(self, corpus_versions: Sequence[str]) -> str:
        """A digest of which revisions of which items stand accepted for ``corpus_versions``: what a golden
        set built from them depends on besides the snapshot (an import outside Dagster changes it)."""
        query = (select(ITEM.c.item_id, ITEM.c.current_revision)
                 .join(REVISION, (REVISION.c.item_id == ITEM.c.item_id) & (REVISION.c.revision == ITEM.c.current_revision))
                 .where(ITEM.c.status == "accepted", REVISION.c.corpus_version.in_(list(corpus_versions)))
                 .order_by(ITEM.c.item_id))
        with self.engine.connect() as conn:
            return sha256_hex(json.dumps([list(row) for row in conn.execute(query)]))[:16]

    def revisions(self, item_id: str) -> list[GoldenItem]:
        with self.engine.connect() as conn:
            return [_to_item(r) for r in conn.execute(_item_query().where(ITEM.c.item_id == item_id)
                                                      .order_by(REVISION.c.revision))]

    def set_reference_statements(self, statements: dict[tuple[str, int], list[str]]) -> None:
        """Store the statements extracted from each (item, revision)'s reference answer, once."""
        with write_transaction(self.engine) as conn:
            for (item_id, revision), values in statements.items():
                conn.execute(update(REVISION).where(REVISION.c.item_id == item_id, REVISION.c.revision == revision)
                             .values(reference_statements_json=json.dumps(values)))

    def latest_version(self, corpus_versions: Sequence[str]) -> GoldenVersion | None:
        """The newest golden version pinned to one of ``corpus_versions`` (a corpus lineage)."""
        query = select(VERSION).where(VERSION.c.corpus_version.in_(list(corpus_versions))).order_by(
            VERSION.c.number.desc()).limit(1)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else self._version(row)

    def versions(self) -> list[GoldenVersion]:
        with self.engine.connect() as conn:
            return [self._version(r) for r in conn.execute(select(VERSION).order_by(VERSION.c.number)).mappings()]

    @staticmethod
    def _version(row) -> GoldenVersion:
        return GoldenVersion(row["number"], row["corpus_version"], row["content_hash"], row["parent_number"],
                             row["item_count"], GoldenDiff.from_dict(json.loads(row["diff_json"])))

    def version_members(self, number: int) -> dict[str, int]:
        with self.engine.connect() as conn:
            return dict(conn.execute(select(MEMBER.c.item_id, MEMBER.c.revision).where(MEMBER.c.number == number)).all())

    def version_item_ids(self, number: int) -> list[str]:
        """A version's item ids in the order of ``version_items``: what a shard slices before it reads its items."""
        query = select(MEMBER.c.item_id).where(MEMBER.c.number == number).order_by(MEMBER.c.item_id)
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def version_items(self, number: int, item_ids: Sequence[str] | None = None) -> list[GoldenItem]:
        """A version's items as pinned: each revision with the version's corpus version; every item, or only
        ``item_ids`` (in item order)."""
        query = (_item_query().add_columns(VERSION.c.corpus_version.label("pinned"),
                                           MEMBER.c.evidence_json.label("pinned_evidence"),
                                           MEMBER.c.relevant_chunks_json.label("pinned_chunks"))
                 .join(MEMBER, (MEMBER.c.item_id == ITEM.c.item_id) & (MEMBER.c.revision == REVISION.c.revision))
                 .join(VERSION, VERSION.c.number == MEMBER.c.number)
                 .where(MEMBER.c.number == number).order_by(ITEM.c.item_id))
        with self.engine.connect() as conn:
            if item_ids is None:
                rows = conn.execute(query).all()
            else:
                order = {item_id: n for n, item_id in enumerate(item_ids)}
                rows = sorted((r for batch in batched(item_ids)
                               for r in conn.execute(query.where(ITEM.c.item_id.in_(batch)))), key=lambda r: order[r.item_id])
        return [_pinned(r) for r in rows]

    def save_version(self, build: GoldenBuild, parent: GoldenVersion | None, diff: GoldenDiff) -> GoldenVersion | None:
        """Store ``build`` as the next version number, unless the newest version of its corpus
        version already has this content. Concurrent writers never share a number. An empty set
        with no history makes no version (None): there is nothing to pin yet."""
        if not build.items and parent is None:
            return None

        def work(conn: Connection) -> GoldenVersion:
            latest = conn.execute(select(VERSION).where(VERSION.c.corpus_version == build.corpus_version)
                                  .order_by(VERSION.c.number.desc()).limit(1)).mappings().first()
            if latest is not None and latest["content_hash"] == build.content_hash:
                return self._version(latest)
            number = (conn.execute(select(func.max(VERSION.c.number))).scalar() or 0) + 1
            conn.execute(insert(VERSION).values(
                number=number, corpus_version=build.corpus_version, content_hash=build.content_hash,
                parent_number=parent.number if parent else None, item_count=len(build.items),
                diff_json=json.dumps(diff.as_dict())))
            repinned = set(build.repinned)
            if build.items:
                conn.execute(insert(MEMBER), [
                    {"number": number, "item_id": i.item_id, "revision": i.revision,
                     "evidence_json": evidence_to_json(i.evidence) if i.item_id in repinned else None,
                     "relevant_chunks_json": refs_to_json(i.relevant_chunks) if i.item_id in repinned else None}
                    for i in build.items])
            return GoldenVersion(number, build.corpus_version, build.content_hash,
                                 parent.number if parent else None, len(build.items), diff, created=True)

        return retry_transaction(self.engine, work)
