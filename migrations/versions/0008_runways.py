"""runways: what the wallet's balance of each input mint covers (how many upcoming
runs), as the leader last read it; `jupcron status` and the page show it, and a
runway under ``runway.alert_below`` is alerted once (``low``).

Revision ID: 0008_runways
Revises: 0007_node_degraded
Create Date: 2026-11-25 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_runways"
down_revision = "0007_node_degraded"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runways",
        sa.Column("wallet", sa.String(length=64), nullable=False),
        sa.Column("mint", sa.String(length=64), nullable=False),
        sa.Column("symbol", sa.String(length=32), nullable=True),
        sa.Column("decimals", sa.Integer(), nullable=True),
        sa.Column("balance", sa.String(length=40), nullable=True),
        sa.Column("runs", sa.Integer(), nullable=True),
        sa.Column("upcoming", sa.Integer(), nullable=False),
        sa.Column("needed", sa.String(length=40), nullable=False),
        sa.Column("short_at", WHEN, nullable=True),
        sa.Column("horizon_s", sa.Integer(), nullable=False),
        sa.Column("plans", sa.JSON(), nullable=False),
        sa.Column("low", sa.Boolean(), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=False),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.Column("checked_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("wallet", "mint", name=op.f("pk_runways")),
    )


def downgrade() -> None:
    op.drop_table("runways")
