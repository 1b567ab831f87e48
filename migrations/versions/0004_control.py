"""control: operators' pauses and the daemons' heartbeats (`jupcron pause`,
`jupcron resume`, `jupcron status`).

Revision ID: 0004_control
Revises: 0003_fills
Create Date: 2026-11-23 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_control"
down_revision = "0003_fills"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "pauses",
        sa.Column("scope", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("paused_by", sa.String(length=128), nullable=False),
        sa.Column("paused_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_pauses")),
    )
    op.create_table(
        "daemon_nodes",
        sa.Column("node", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("role_since", WHEN, nullable=False),
        sa.Column("started_at", WHEN, nullable=False),
        sa.Column("last_beat", WHEN, nullable=False),
        sa.Column("dry_run", sa.Boolean(), nullable=False),
        sa.Column("kill_switch", sa.Text(), nullable=True),
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("node", name=op.f("pk_daemon_nodes")),
    )


def downgrade() -> None:
    op.drop_table("daemon_nodes")
    op.drop_table("pauses")
