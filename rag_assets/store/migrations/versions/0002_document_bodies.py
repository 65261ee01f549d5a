"""Document bodies stored once by hash; chunks become offsets into them (their text column is kept,
nullable, for the revisions saved before: those have no body to slice).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "document_body",
        sa.Column("body_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("body_hash"),
    )
    # A plain ADD COLUMN without a foreign key: SQLite adds a constraint only by rebuilding the table
    # (batch mode), and dropping document_revision, which the chunks reference, fails its foreign keys.
    op.add_column("document_revision",
                  sa.Column("body_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
    with op.batch_alter_table("chunk") as batch_op:
        batch_op.alter_column("text", existing_type=sa.Text(), nullable=True)


def downgrade() -> None:
    # Chunks get their text back from their revision's body before the bodies go.
    op.execute("UPDATE chunk SET text = (SELECT substr(b.body, chunk.start_char + 1, chunk.end_char - chunk.start_char)"
               " FROM document_revision r JOIN document_body b ON b.body_hash = r.body_hash"
               " WHERE r.revision_id = chunk.revision_id) WHERE text IS NULL")
    with op.batch_alter_table("chunk") as batch_op:
        batch_op.alter_column("text", existing_type=sa.Text(), nullable=False)
    op.drop_column("document_revision", "body_hash")
    op.drop_table("document_body")
