"""plans.next_fire and plans.fire_version: each plan's next slot, kept by the
scheduler, which reads the plans due next from the store in time order (a page at
a time) instead of keeping a job per plan in memory. Existing plans get
fire_version 0 (settled at no version): the scheduler settles each at its next
start, as it did every plan; a plan `plans apply` adds has fire_version NULL and
its first slot in next_fire.

Revision ID: 0011_next_fire
Revises: 0010_shards
Create Date: 2026-11-26 23:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_next_fire"
down_revision = "0010_shards"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("plans", recreate="never") as batch:
        batch.add_column(sa.Column("next_fire", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("fire_version", sa.Integer(), nullable=True))
    op.create_index("ix_plans_next_fire", "plans", ["next_fire"])
    op.execute("UPDATE plans SET fire_version = 0")


def downgrade() -> None:
    op.drop_index("ix_plans_next_fire", table_name="plans")
    with op.batch_alter_table("plans", recreate="never") as batch:
        batch.drop_column("fire_version")
        batch.drop_column("next_fire")
