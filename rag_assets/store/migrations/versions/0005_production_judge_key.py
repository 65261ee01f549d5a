"""A production day's scoring keeps which judge configuration scored it (its key), so that drift compares a day only
with days the same judge scored (null: scored before it was recorded, compared with nothing).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("production_run", sa.Column("judge_key", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("production_run") as batch_op:
        batch_op.drop_column("judge_key")
