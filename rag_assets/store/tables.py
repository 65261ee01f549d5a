"""The store's tables: the one place where domain objects meet SQL. A change here comes with an
alembic migration (``rag_assets/store/migrations``); ``tests/store/test_migrations.py`` fails when
the two disagree.

Snapshots share document revisions: a revision (path + content + chunker) and its chunks are
written once and linked from every snapshot that contains it, so a new corpus version with one
changed file adds one revision, its chunks, and a row per document in ``snapshot_document``. A
revision's body is kept once in ``document_body`` by its hash (the same text under another path or
chunker is not stored again); its chunks are offsets into it, without a copy of their text.
Revisions saved before the body store (migration 0002) have no body and keep their chunks' texts.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Column, Text
from sqlmodel import Field, SQLModel


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class CorpusSnapshotRow(SQLModel, table=True):
    __tablename__ = "corpus_snapshot"

    version_id: str = Field(primary_key=True, max_length=32)
    corpus_root: str = Field(index=True)
    created_at: dt.datetime = Field(default_factory=utcnow, index=True)
    parent_version: str | None = Field(default=None, max_length=32)
    chunker_config: str
    document_count: int
    chunk_count: int
    total_bytes: int = Field(sa_column=Column(BigInteger, nullable=False))
    files_read: int
    skipped_json: str = Field(sa_column=Column(Text, nullable=False))
    diff_json: str = Field(sa_column=Column(Text, nullable=False))


class DocumentRevisionRow(SQLModel, table=True):
    __tablename__ = "document_revision"

    revision_id: str = Field(primary_key=True, max_length=32)
    path: str = Field(index=True)
    content_hash: str = Field(max_length=64)
    size: int = Field(sa_column=Column(BigInteger, nullable=False))
    title: str
    doc_version: str | None = None
    doc_date: str | None = None
    kind: str
    chunk_count: int
    # No foreign key (see migration 0002): the body and its revision are saved in one transaction.
    body_hash: str | None = Field(default=None, max_length=64)


class DocumentBodyRow(SQLModel, table=True):
    """A document body, once per distinct text: chunk texts and evidence spans are slices of it."""

    __tablename__ = "document_body"

    body_hash: str = Field(primary_key=True, max_length=64)
    body: str = Field(sa_column=Column(Text, nullable=False))


class SnapshotDocumentRow(SQLModel, table=True):
    __tablename__ = "snapshot_document"

    version_id: str = Field(primary_key=True, foreign_key="corpus_snapshot.version_id", max_length=32)
    path: str = Field(primary_key=True)
    revision_id: str = Field(foreign_key="document_revision.revision_id", index=True, max_length=32)


class ChunkRow(SQLModel, table=True):
    __tablename__ = "chunk"

    revision_id: str = Field(primary_key=True, foreign_key="document_revision.revision_id", max_length=32)
    ordinal: int = Field(primary_key=True)
    chunk_id: str = Field(index=True, max_length=32)
    start_char: int
    end_char: int
    heading: str = Field(sa_column=Column(Text, nullable=False))
    text: str | None = Field(default=None, sa_column=Column(Text))  # only for revisions saved without a body
    content_hash: str = Field(max_length=64)


class FileStatRow(SQLModel, table=True):
    """A cache, not history: what the last snapshot of a root saw, so unchanged files are not read."""

    __tablename__ = "file_stat_cache"

    corpus_root: str = Field(primary_key=True)
    path: str = Field(primary_key=True)
    size: int = Field(sa_column=Column(BigInteger, nullable=False))
    mtime_ns: int = Field(sa_column=Column(BigInteger, nullable=False))
    content_hash: str = Field(max_length=64)
    skip_reason: str | None = None


class CorpusListingRow(SQLModel, table=True):
    """A cache, not history: the stat-walk fingerprint of a root at its last snapshot and the version
    it gave, so an unchanged corpus is recognised from one row instead of a row per file."""

    __tablename__ = "corpus_listing"

    corpus_root: str = Field(primary_key=True)
    fingerprint: str = Field(max_length=32)
    version_id: str = Field(max_length=32)


class LLMCacheRow(SQLModel, table=True):
    """A valid LLM answer, keyed by everything that shaped it (see rag_assets.llm.cache)."""

    __tablename__ = "llm_cache"

    cache_key: str = Field(primary_key=True, max_length=64)
    provider: str
    model: str
    template_ref: str = Field(index=True)
    output_json: str = Field(sa_column=Column(Text, nullable=False))
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None
    created_at: dt.datetime = Field(default_factory=utcnow)


class LLMSpendRow(SQLModel, table=True):
    """What one paid LLM request cost, tagged with its Dagster run and asset (see rag_assets.llm.budget)."""

    __tablename__ = "llm_spend"

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(index=True, max_length=64)
    scope: str = Field(max_length=128)
    cost_usd: float
    created_at: dt.datetime = Field(default_factory=utcnow)


class LLMBatchRow(SQLModel, table=True):
    """A provider batch this project submitted: ``pending`` until its answers are cached (then
    ``ended``), or ``lost`` when the provider no longer knows it (see rag_assets.llm.batch)."""

    __tablename__ = "llm_batch"

    batch_id: str = Field(primary_key=True, max_length=128)
    provider: str
    model: str
    request_count: int
    status: str = Field(default="pending", index=True, max_length=16)
    submitted_at: dt.datetime = Field(default_factory=utcnow)
    finished_at: dt.datetime | None = None


class LLMBatchRequestRow(SQLModel, table=True):
    """One request of a batch: its custom_id (the request's cache key) and the call it answers."""

    __tablename__ = "llm_batch_request"

    batch_id: str = Field(primary_key=True, foreign_key="llm_batch.batch_id", max_length=128)
    custom_id: str = Field(primary_key=True, index=True, max_length=64)
    call_key: str = Field(sa_column=Column(Text, nullable=False))
    template_ref: str


class CandidateRow(SQLModel, table=True):
    """A generated question awaiting review; ``status`` moves with curation decisions."""

    __tablename__ = "question_candidate"

    candidate_id: str = Field(primary_key=True, max_length=32)
    corpus_version: str = Field(index=True, max_length=32)
    question_type: str = Field(max_length=32)
    question: str = Field(sa_column=Column(Text, nullable=False))
    reference_answer: str = Field(sa_column=Column(Text, nullable=False))
    provider: str
    model: str
    prompt_ref: str
    status: str = Field(default="pending", index=True, max_length=16)
    origin_item_id: str | None = Field(default=None, max_length=64)
    change_note: str | None = Field(default=None, sa_column=Column(Text))
    created_at: dt.datetime = Field(default_factory=utcnow)


class CandidateChunkRow(SQLModel, table=True):
    """A chunk a candidate names: ``relevant`` (answers it) or ``source`` (it was generated from)."""

    __tablename__ = "question_candidate_chunk"

    candidate_id: str = Field(primary_key=True, foreign_key="question_candidate.candidate_id", max_length=32)
    role: str = Field(primary_key=True, max_length=16)
    chunk_id: str = Field(primary_key=True, index=True, max_length=32)
    content_hash: str = Field(max_length=64)
    position: int


class ReviewImportRow(SQLModel, table=True):
    """A review file that was applied (by content hash): a file is never applied twice."""

    __tablename__ = "review_import"

    sha256: str = Field(primary_key=True, max_length=64)
    file_name: str
    corpus_version: str = Field(max_length=32)
    decisions: int
    undecided: int
    imported_at: dt.datetime = Field(default_factory=utcnow)


class ReviewDecisionRow(SQLModel, table=True):
    """Every decision ever imported, with who made it, when, and the file and row it came from."""

    __tablename__ = "review_decision"

    decision_id: int | None = Field(default=None, primary_key=True)
    candidate_id: str = Field(index=True, max_length=64)
    corpus_version: str = Field(max_length=32)
    decision: str = Field(max_length=16)
    edited_question: str | None = Field(default=None, sa_column=Column(Text))
    edited_answer: str | None = Field(default=None, sa_column=Column(Text))
    notes: str | None = Field(default=None, sa_column=Column(Text))
    reviewer: str
    decided_at: dt.datetime = Field(default_factory=utcnow)
    source_file: str
    source_sha256: str = Field(index=True, max_length=64)
    source_row: int


class GoldenItemRow(SQLModel, table=True):
    """A golden item's identity and state; its content lives in revisions."""

    __tablename__ = "golden_item"

    item_id: str = Field(primary_key=True, max_length=64)
    question_type: str = Field(max_length=32)
    origin: str
    status: str = Field(index=True, max_length=16)  # accepted | rejected | retired
    current_revision: int
    updated_at: dt.datetime = Field(default_factory=utcnow)


class GoldenItemRevisionRow(SQLModel, table=True):
    """Immutable content of an item; an edit adds a revision and keeps the old ones."""

    __tablename__ = "golden_item_revision"

    item_id: str = Field(primary_key=True, foreign_key="golden_item.item_id", max_length=64)
    revision: int = Field(primary_key=True)
    question: str = Field(sa_column=Column(Text, nullable=False))
    reference_answer: str = Field(sa_column=Column(Text, nullable=False))
    relevant_chunks_json: str = Field(sa_column=Column(Text, nullable=False))
    corpus_version: str = Field(max_length=32)
    decision_id: int | None = None
    reference_statements_json: str | None = Field(default=None, sa_column=Column(Text))
    # Evidence spans (rag_assets.evidence.spans.EvidenceSpan.to_json); null: the relevant chunks' spans.
    evidence_json: str | None = Field(default=None, sa_column=Column(Text))
    created_at: dt.datetime = Field(default_factory=utcnow)


class GoldenVersionRow(SQLModel, table=True):
    """An immutable golden-set version; ``number`` is global and never reused."""

    __tablename__ = "golden_version"

    number: int = Field(primary_key=True)
    corpus_version: str = Field(index=True, max_length=32)
    content_hash: str = Field(max_length=64)
    parent_number: int | None = None
    item_count: int
    diff_json: str = Field(sa_column=Column(Text, nullable=False))
    created_at: dt.datetime = Field(default_factory=utcnow)


class GoldenVersionItemRow(SQLModel, table=True):
    """Membership and pin: this revision of this item, pinned to the version's corpus version."""

    __tablename__ = "golden_version_item"

    number: int = Field(primary_key=True, foreign_key="golden_version.number")
    item_id: str = Field(primary_key=True, foreign_key="golden_item.item_id", max_length=64)
    revision: int
    # Where the version pinned an item whose evidence moved (null: the revision's spans and chunks).
    evidence_json: str | None = Field(default=None, sa_column=Column(Text))
    relevant_chunks_json: str | None = Field(default=None, sa_column=Column(Text))


class RagRunRow(SQLModel, table=True):
    """One execution of a RAG system over one golden-set version."""

    __tablename__ = "rag_run"

    run_id: str = Field(primary_key=True, max_length=40)
    corpus_version: str = Field(index=True, max_length=32)
    golden_version: int = Field(index=True)
    system_name: str
    system_config_hash: str = Field(max_length=32)
    system_config_json: str = Field(sa_column=Column(Text, nullable=False))
    items: int
    errors: int
    created_at: dt.datetime = Field(default_factory=utcnow)


class RagResultRow(SQLModel, table=True):
    """A RAG system's outcome on one golden item (an answer, or an error record)."""

    __tablename__ = "rag_result"

    run_id: str = Field(primary_key=True, foreign_key="rag_run.run_id", max_length=40)
    item_id: str = Field(primary_key=True, max_length=64)
    item_revision: int
    answer: str | None = Field(default=None, sa_column=Column(Text))
    retrieved_json: str = Field(sa_column=Column(Text, nullable=False))
    citations_json: str = Field(sa_column=Column(Text, nullable=False))
    latency_ms: float
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None
    error: str | None = Field(default=None, sa_column=Column(Text))
    error_kind: str | None = None
    extra_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))


class EvaluationRow(SQLModel, table=True):
    """The history row of one evaluation: what was scored, with what, and its aggregates and gates."""

    __tablename__ = "evaluation"

    evaluation_id: str = Field(primary_key=True, max_length=40)
    corpus_version: str = Field(index=True, max_length=32)
    golden_version: int
    rag_run_id: str = Field(max_length=40)
    system_name: str
    system_config_hash: str = Field(max_length=32)
    judge: str
    k: int
    aggregates_json: str = Field(sa_column=Column(Text, nullable=False))
    gates_json: str = Field(sa_column=Column(Text, nullable=False))
    passed: bool
    baseline_id: str | None = Field(default=None, max_length=40)
    report_path: str | None = None
    created_at: dt.datetime = Field(default_factory=utcnow, index=True)


class EvaluationScoreRow(SQLModel, table=True):
    """One metric of one item in one evaluation: a value, or the reason the judge could not score it."""

    __tablename__ = "evaluation_score"

    evaluation_id: str = Field(primary_key=True, foreign_key="evaluation.evaluation_id", max_length=40)
    item_id: str = Field(primary_key=True, max_length=64)
    metric: str = Field(primary_key=True, max_length=48)
    item_revision: int
    question_type: str = Field(max_length=32)
    value: float | None = None
    failure: str | None = Field(default=None, sa_column=Column(Text))


class JudgedShardRow(SQLModel, table=True):
    """A judge shard's outcome by the fingerprint of what it read (see rag_assets.scoring.reuse): a shard
    with this fingerprint again is not judged again."""

    __tablename__ = "judged_shard"

    fingerprint: str = Field(primary_key=True, max_length=64)
    items: int
    outcome_json: str = Field(sa_column=Column(Text, nullable=False))
    created_at: dt.datetime = Field(default_factory=utcnow)


class AlertRow(SQLModel, table=True):
    """A failed run, as the run-failure sensor recorded it."""

    __tablename__ = "alert"

    alert_id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(index=True, max_length=64)
    job: str
    partition: str | None = None
    summary: str = Field(sa_column=Column(Text, nullable=False))
    errors_json: str = Field(sa_column=Column(Text, nullable=False))
    created_at: str


class ProductionRunRow(SQLModel, table=True):
    """One scoring of a day's production sample; a re-run of the day adds a row, the newest one counts."""

    __tablename__ = "production_run"

    run_id: str = Field(primary_key=True, max_length=40)
    day: str = Field(index=True, max_length=10)  # ISO date (UTC)
    judge: str
    judge_key: str | None = Field(default=None, max_length=200)  # JudgeConfig key; None before it was recorded
    records: int
    bad_lines: int
    sample_size: int
    aggregates_json: str = Field(sa_column=Column(Text, nullable=False))
    created_at: dt.datetime = Field(default_factory=utcnow, index=True)


class ProductionScoreRow(SQLModel, table=True):
    """One metric of one sampled query: a value, or the reason it could not be scored."""

    __tablename__ = "production_score"

    run_id: str = Field(primary_key=True, foreign_key="production_run.run_id", max_length=40)
    item_id: str = Field(primary_key=True, max_length=64)  # the query id
    metric: str = Field(primary_key=True, max_length=48)
    value: float | None = None
    failure: str | None = Field(default=None, sa_column=Column(Text))


class StoreOwnerRow(SQLModel, table=True):
    """The lifecycle instance a store belongs to ("" for the unnamed one): its other rows carry no instance
    name, so a second instance on the same database would mix its corpus versions and golden sets in."""

    __tablename__ = "store_owner"

    instance: str = Field(primary_key=True, max_length=64)


class JudgeReviewSampleRow(SQLModel, table=True):
    """The judged items of one evaluation sent to the experts, and the judge configuration that judged them."""

    __tablename__ = "judge_review_sample"

    evaluation_id: str = Field(primary_key=True, max_length=40)
    judge_config: str = Field(index=True, max_length=16)
    judge_config_json: str = Field(sa_column=Column(Text, nullable=False))
    items_json: str = Field(sa_column=Column(Text, nullable=False))  # item id -> metric -> judge verdict or null
    file_name: str | None = None  # None: the evaluation sent no review (sample size 0), its judge is recorded
    created_at: dt.datetime = Field(default_factory=utcnow, index=True)


class JudgeReviewImportRow(SQLModel, table=True):
    """A judge-review file that was applied (by content hash): a file is never applied twice."""

    __tablename__ = "judge_review_import"

    sha256: str = Field(primary_key=True, max_length=64)
    file_name: str
    evaluation_id: str = Field(max_length=40)
    verdicts: int
    imported_at: dt.datetime = Field(default_factory=utcnow)


class ExpertVerdictRow(SQLModel, table=True):
    """An expert's pass/fail on one metric of one judged item, beside the judge's, and where it was read."""

    __tablename__ = "expert_verdict"

    verdict_id: int | None = Field(default=None, primary_key=True)
    evaluation_id: str = Field(index=True, max_length=40)
    judge_config: str = Field(index=True, max_length=16)
    item_id: str = Field(max_length=64)
    metric: str = Field(max_length=48)
    judge_verdict: str = Field(max_length=8)
    expert_verdict: str = Field(max_length=8)
    reviewer: str
    notes: str | None = Field(default=None, sa_column=Column(Text))
    source_sha256: str = Field(index=True, max_length=64)
    source_row: int


class JudgeCalibrationRow(SQLModel, table=True):
    """The judge's agreement with the experts on one metric, for one judge configuration, as computed then."""

    __tablename__ = "judge_calibration"

    calibration_id: int | None = Field(default=None, primary_key=True)
    judge_config: str = Field(index=True, max_length=16)
    judge_config_json: str = Field(sa_column=Column(Text, nullable=False))
    metric: str = Field(max_length=48)
    n: int
    accuracy: float
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    confusion_json: str = Field(sa_column=Column(Text, nullable=False))
    disagreements_json: str = Field(sa_column=Column(Text, nullable=False))
    created_at: dt.datetime = Field(default_factory=utcnow, index=True)
