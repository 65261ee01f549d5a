"""A golden item revision keeps its evidence as spans of its corpus revision (null: the spans of its
relevant chunks, as every revision saved before had).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("golden_item_revision", sa.Column("evidence_json", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("golden_item_revision") as batch_op:
        batch_op.drop_column("evidence_json")
