"""Baseline: the schema of every store made before migrations (main up to 79edbae).

Revision ID: 0001
Revises: 
Create Date: 2026-12-02
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('alert',
    sa.Column('alert_id', sa.Integer(), nullable=False),
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('job', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('partition', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('summary', sa.Text(), nullable=False),
    sa.Column('errors_json', sa.Text(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.PrimaryKeyConstraint('alert_id')
    )
    with op.batch_alter_table('alert', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_alert_run_id'), ['run_id'], unique=False)

    op.create_table('corpus_listing',
    sa.Column('corpus_root', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('fingerprint', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('version_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.PrimaryKeyConstraint('corpus_root')
    )
    op.create_table('corpus_snapshot',
    sa.Column('version_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('corpus_root', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('parent_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
    sa.Column('chunker_config', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('document_count', sa.Integer(), nullable=False),
    sa.Column('chunk_count', sa.Integer(), nullable=False),
    sa.Column('total_bytes', sa.BigInteger(), nullable=False),
    sa.Column('files_read', sa.Integer(), nullable=False),
    sa.Column('skipped_json', sa.Text(), nullable=False),
    sa.Column('diff_json', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('version_id')
    )
    with op.batch_alter_table('corpus_snapshot', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_corpus_snapshot_corpus_root'), ['corpus_root'], unique=False)
        batch_op.create_index(batch_op.f('ix_corpus_snapshot_created_at'), ['created_at'], unique=False)

    op.create_table('document_revision',
    sa.Column('revision_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('path', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('content_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('title', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('doc_version', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('doc_date', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('chunk_count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('revision_id')
    )
    with op.batch_alter_table('document_revision', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_document_revision_path'), ['path'], unique=False)

    op.create_table('evaluation',
    sa.Column('evaluation_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('golden_version', sa.Integer(), nullable=False),
    sa.Column('rag_run_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('system_name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('system_config_hash', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('judge', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('k', sa.Integer(), nullable=False),
    sa.Column('aggregates_json', sa.Text(), nullable=False),
    sa.Column('gates_json', sa.Text(), nullable=False),
    sa.Column('passed', sa.Boolean(), nullable=False),
    sa.Column('baseline_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=True),
    sa.Column('report_path', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('evaluation_id')
    )
    with op.batch_alter_table('evaluation', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_evaluation_corpus_version'), ['corpus_version'], unique=False)
        batch_op.create_index(batch_op.f('ix_evaluation_created_at'), ['created_at'], unique=False)

    op.create_table('expert_verdict',
    sa.Column('verdict_id', sa.Integer(), nullable=False),
    sa.Column('evaluation_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('judge_config', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('metric', sqlmodel.sql.sqltypes.AutoString(length=48), nullable=False),
    sa.Column('judge_verdict', sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
    sa.Column('expert_verdict', sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
    sa.Column('reviewer', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('source_sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('source_row', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('verdict_id')
    )
    with op.batch_alter_table('expert_verdict', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_expert_verdict_evaluation_id'), ['evaluation_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_expert_verdict_judge_config'), ['judge_config'], unique=False)
        batch_op.create_index(batch_op.f('ix_expert_verdict_source_sha256'), ['source_sha256'], unique=False)

    op.create_table('file_stat_cache',
    sa.Column('corpus_root', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('path', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('mtime_ns', sa.BigInteger(), nullable=False),
    sa.Column('content_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('skip_reason', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.PrimaryKeyConstraint('corpus_root', 'path')
    )
    op.create_table('golden_item',
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('question_type', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('current_revision', sa.Integer(), nullable=False),
    sa.Column('updated_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('item_id')
    )
    with op.batch_alter_table('golden_item', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_golden_item_status'), ['status'], unique=False)

    op.create_table('golden_version',
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('content_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('parent_number', sa.Integer(), nullable=True),
    sa.Column('item_count', sa.Integer(), nullable=False),
    sa.Column('diff_json', sa.Text(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('number')
    )
    with op.batch_alter_table('golden_version', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_golden_version_corpus_version'), ['corpus_version'], unique=False)

    op.create_table('judge_calibration',
    sa.Column('calibration_id', sa.Integer(), nullable=False),
    sa.Column('judge_config', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('judge_config_json', sa.Text(), nullable=False),
    sa.Column('metric', sqlmodel.sql.sqltypes.AutoString(length=48), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('accuracy', sa.Float(), nullable=False),
    sa.Column('kappa', sa.Float(), nullable=True),
    sa.Column('kappa_low', sa.Float(), nullable=True),
    sa.Column('kappa_high', sa.Float(), nullable=True),
    sa.Column('confusion_json', sa.Text(), nullable=False),
    sa.Column('disagreements_json', sa.Text(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('calibration_id')
    )
    with op.batch_alter_table('judge_calibration', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_judge_calibration_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_judge_calibration_judge_config'), ['judge_config'], unique=False)

    op.create_table('judge_review_import',
    sa.Column('sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('file_name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('evaluation_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('verdicts', sa.Integer(), nullable=False),
    sa.Column('imported_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('sha256')
    )
    op.create_table('judge_review_sample',
    sa.Column('evaluation_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('judge_config', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('judge_config_json', sa.Text(), nullable=False),
    sa.Column('items_json', sa.Text(), nullable=False),
    sa.Column('file_name', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('evaluation_id')
    )
    with op.batch_alter_table('judge_review_sample', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_judge_review_sample_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_judge_review_sample_judge_config'), ['judge_config'], unique=False)

    op.create_table('judged_shard',
    sa.Column('fingerprint', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('items', sa.Integer(), nullable=False),
    sa.Column('outcome_json', sa.Text(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('fingerprint')
    )
    op.create_table('llm_batch',
    sa.Column('batch_id', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
    sa.Column('provider', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('model', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('request_count', sa.Integer(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('submitted_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('finished_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    sa.PrimaryKeyConstraint('batch_id')
    )
    with op.batch_alter_table('llm_batch', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_llm_batch_status'), ['status'], unique=False)

    op.create_table('llm_cache',
    sa.Column('cache_key', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('provider', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('model', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('template_ref', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('output_json', sa.Text(), nullable=False),
    sa.Column('input_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('cost_usd', sa.Float(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('cache_key')
    )
    with op.batch_alter_table('llm_cache', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_llm_cache_template_ref'), ['template_ref'], unique=False)

    op.create_table('llm_spend',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('scope', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
    sa.Column('cost_usd', sa.Float(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('llm_spend', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_llm_spend_run_id'), ['run_id'], unique=False)

    op.create_table('production_run',
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('day', sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
    sa.Column('judge', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('records', sa.Integer(), nullable=False),
    sa.Column('bad_lines', sa.Integer(), nullable=False),
    sa.Column('sample_size', sa.Integer(), nullable=False),
    sa.Column('aggregates_json', sa.Text(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('run_id')
    )
    with op.batch_alter_table('production_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_production_run_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_production_run_day'), ['day'], unique=False)

    op.create_table('question_candidate',
    sa.Column('candidate_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('question_type', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('question', sa.Text(), nullable=False),
    sa.Column('reference_answer', sa.Text(), nullable=False),
    sa.Column('provider', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('model', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('prompt_ref', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('origin_item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('candidate_id')
    )
    with op.batch_alter_table('question_candidate', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_question_candidate_corpus_version'), ['corpus_version'], unique=False)
        batch_op.create_index(batch_op.f('ix_question_candidate_status'), ['status'], unique=False)

    op.create_table('rag_run',
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('golden_version', sa.Integer(), nullable=False),
    sa.Column('system_name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('system_config_hash', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('system_config_json', sa.Text(), nullable=False),
    sa.Column('items', sa.Integer(), nullable=False),
    sa.Column('errors', sa.Integer(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('run_id')
    )
    with op.batch_alter_table('rag_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_rag_run_corpus_version'), ['corpus_version'], unique=False)
        batch_op.create_index(batch_op.f('ix_rag_run_golden_version'), ['golden_version'], unique=False)

    op.create_table('review_decision',
    sa.Column('decision_id', sa.Integer(), nullable=False),
    sa.Column('candidate_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('decision', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('edited_question', sa.Text(), nullable=True),
    sa.Column('edited_answer', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('reviewer', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('decided_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('source_file', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('source_sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('source_row', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('decision_id')
    )
    with op.batch_alter_table('review_decision', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_review_decision_candidate_id'), ['candidate_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_review_decision_source_sha256'), ['source_sha256'], unique=False)

    op.create_table('review_import',
    sa.Column('sha256', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('file_name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('decisions', sa.Integer(), nullable=False),
    sa.Column('undecided', sa.Integer(), nullable=False),
    sa.Column('imported_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('sha256')
    )
    op.create_table('store_owner',
    sa.Column('instance', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.PrimaryKeyConstraint('instance')
    )
    op.create_table('chunk',
    sa.Column('revision_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('ordinal', sa.Integer(), nullable=False),
    sa.Column('chunk_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('start_char', sa.Integer(), nullable=False),
    sa.Column('end_char', sa.Integer(), nullable=False),
    sa.Column('heading', sa.Text(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('content_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.ForeignKeyConstraint(['revision_id'], ['document_revision.revision_id'], ),
    sa.PrimaryKeyConstraint('revision_id', 'ordinal')
    )
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_chunk_chunk_id'), ['chunk_id'], unique=False)

    op.create_table('evaluation_score',
    sa.Column('evaluation_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('metric', sqlmodel.sql.sqltypes.AutoString(length=48), nullable=False),
    sa.Column('item_revision', sa.Integer(), nullable=False),
    sa.Column('question_type', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('failure', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['evaluation_id'], ['evaluation.evaluation_id'], ),
    sa.PrimaryKeyConstraint('evaluation_id', 'item_id', 'metric')
    )
    op.create_table('golden_item_revision',
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('question', sa.Text(), nullable=False),
    sa.Column('reference_answer', sa.Text(), nullable=False),
    sa.Column('relevant_chunks_json', sa.Text(), nullable=False),
    sa.Column('corpus_version', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('decision_id', sa.Integer(), nullable=True),
    sa.Column('reference_statements_json', sa.Text(), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['item_id'], ['golden_item.item_id'], ),
    sa.PrimaryKeyConstraint('item_id', 'revision')
    )
    op.create_table('golden_version_item',
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['item_id'], ['golden_item.item_id'], ),
    sa.ForeignKeyConstraint(['number'], ['golden_version.number'], ),
    sa.PrimaryKeyConstraint('number', 'item_id')
    )
    op.create_table('llm_batch_request',
    sa.Column('batch_id', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
    sa.Column('custom_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('call_key', sa.Text(), nullable=False),
    sa.Column('template_ref', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.ForeignKeyConstraint(['batch_id'], ['llm_batch.batch_id'], ),
    sa.PrimaryKeyConstraint('batch_id', 'custom_id')
    )
    with op.batch_alter_table('llm_batch_request', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_llm_batch_request_custom_id'), ['custom_id'], unique=False)

    op.create_table('production_score',
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('metric', sqlmodel.sql.sqltypes.AutoString(length=48), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('failure', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['production_run.run_id'], ),
    sa.PrimaryKeyConstraint('run_id', 'item_id', 'metric')
    )
    op.create_table('question_candidate_chunk',
    sa.Column('candidate_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('role', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('chunk_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('content_hash', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['candidate_id'], ['question_candidate.candidate_id'], ),
    sa.PrimaryKeyConstraint('candidate_id', 'role', 'chunk_id')
    )
    with op.batch_alter_table('question_candidate_chunk', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_question_candidate_chunk_chunk_id'), ['chunk_id'], unique=False)

    op.create_table('rag_result',
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('item_revision', sa.Integer(), nullable=False),
    sa.Column('answer', sa.Text(), nullable=True),
    sa.Column('retrieved_json', sa.Text(), nullable=False),
    sa.Column('citations_json', sa.Text(), nullable=False),
    sa.Column('latency_ms', sa.Float(), nullable=False),
    sa.Column('input_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('cost_usd', sa.Float(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('error_kind', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('extra_json', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['rag_run.run_id'], ),
    sa.PrimaryKeyConstraint('run_id', 'item_id')
    )
    op.create_table('snapshot_document',
    sa.Column('version_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('path', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('revision_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.ForeignKeyConstraint(['revision_id'], ['document_revision.revision_id'], ),
    sa.ForeignKeyConstraint(['version_id'], ['corpus_snapshot.version_id'], ),
    sa.PrimaryKeyConstraint('version_id', 'path')
    )
    with op.batch_alter_table('snapshot_document', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_snapshot_document_revision_id'), ['revision_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('snapshot_document', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_snapshot_document_revision_id'))

    op.drop_table('snapshot_document')
    op.drop_table('rag_result')
    with op.batch_alter_table('question_candidate_chunk', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_question_candidate_chunk_chunk_id'))

    op.drop_table('question_candidate_chunk')
    op.drop_table('production_score')
    with op.batch_alter_table('llm_batch_request', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_llm_batch_request_custom_id'))

    op.drop_table('llm_batch_request')
    op.drop_table('golden_version_item')
    op.drop_table('golden_item_revision')
    op.drop_table('evaluation_score')
    with op.batch_alter_table('chunk', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_chunk_chunk_id'))

    op.drop_table('chunk')
    op.drop_table('store_owner')
    op.drop_table('review_import')
    with op.batch_alter_table('review_decision', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_review_decision_source_sha256'))
        batch_op.drop_index(batch_op.f('ix_review_decision_candidate_id'))

    op.drop_table('review_decision')
    with op.batch_alter_table('rag_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rag_run_golden_version'))
        batch_op.drop_index(batch_op.f('ix_rag_run_corpus_version'))

    op.drop_table('rag_run')
    with op.batch_alter_table('question_candidate', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_question_candidate_status'))
        batch_op.drop_index(batch_op.f('ix_question_candidate_corpus_version'))

    op.drop_table('question_candidate')
    with op.batch_alter_table('production_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_production_run_day'))
        batch_op.drop_index(batch_op.f('ix_production_run_created_at'))

    op.drop_table('production_run')
    with op.batch_alter_table('llm_spend', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_llm_spend_run_id'))

    op.drop_table('llm_spend')
    with op.batch_alter_table('llm_cache', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_llm_cache_template_ref'))

    op.drop_table('llm_cache')
    with op.batch_alter_table('llm_batch', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_llm_batch_status'))

    op.drop_table('llm_batch')
    op.drop_table('judged_shard')
    with op.batch_alter_table('judge_review_sample', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_judge_review_sample_judge_config'))
        batch_op.drop_index(batch_op.f('ix_judge_review_sample_created_at'))

    op.drop_table('judge_review_sample')
    op.drop_table('judge_review_import')
    with op.batch_alter_table('judge_calibration', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_judge_calibration_judge_config'))
        batch_op.drop_index(batch_op.f('ix_judge_calibration_created_at'))

    op.drop_table('judge_calibration')
    with op.batch_alter_table('golden_version', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_golden_version_corpus_version'))

    op.drop_table('golden_version')
    with op.batch_alter_table('golden_item', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_golden_item_status'))

    op.drop_table('golden_item')
    op.drop_table('file_stat_cache')
    with op.batch_alter_table('expert_verdict', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_expert_verdict_source_sha256'))
        batch_op.drop_index(batch_op.f('ix_expert_verdict_judge_config'))
        batch_op.drop_index(batch_op.f('ix_expert_verdict_evaluation_id'))

    op.drop_table('expert_verdict')
    with op.batch_alter_table('evaluation', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evaluation_created_at'))
        batch_op.drop_index(batch_op.f('ix_evaluation_corpus_version'))

    op.drop_table('evaluation')
    with op.batch_alter_table('document_revision', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_document_revision_path'))

    op.drop_table('document_revision')
    with op.batch_alter_table('corpus_snapshot', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_corpus_snapshot_created_at'))
        batch_op.drop_index(batch_op.f('ix_corpus_snapshot_corpus_root'))

    op.drop_table('corpus_snapshot')
    op.drop_table('corpus_listing')
    with op.batch_alter_table('alert', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_alert_run_id'))

    op.drop_table('alert')
