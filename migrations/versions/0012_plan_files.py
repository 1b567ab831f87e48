"""plan_files: each file of plans.dir as the last complete `plans apply` read it
(path, size, mtime_ns, the SHA-256 of its bytes), so `jupcron status` tells whether
the folder is in sync with the store by stat, reading only the files whose stat
changed. Empty until the next complete apply (status then reads every file, as before).

Revision ID: 0012_plan_files
Revises: 0011_next_fire
Create Date: 2026-11-27 05:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_plan_files"
down_revision = "0011_next_fire"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plan_files",
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("path", name=op.f("pk_plan_files")),
    )


def downgrade() -> None:
    op.drop_table("plan_files")
