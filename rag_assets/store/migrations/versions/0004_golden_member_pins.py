"""A golden version keeps where it pinned an item whose evidence moved: the spans and chunks of its
corpus version (null: the revision's own, as every member saved before had). A stale item's review
candidate keeps what its evidence said and says now.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("golden_version_item", sa.Column("evidence_json", sa.Text(), nullable=True))
    op.add_column("golden_version_item", sa.Column("relevant_chunks_json", sa.Text(), nullable=True))
    op.add_column("question_candidate", sa.Column("change_note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("question_candidate") as batch_op:
        batch_op.drop_column("change_note")
    with op.batch_alter_table("golden_version_item") as batch_op:
        batch_op.drop_column("relevant_chunks_json")
        batch_op.drop_column("evidence_json")
