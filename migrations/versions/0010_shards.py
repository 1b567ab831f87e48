"""shards: the wallets each daemon leads, in its heartbeat row (leadership per
wallet on PostgreSQL), and the API rate budget per key shared by the daemons
(a token bucket per key digest, never the key).

Revision ID: 0010_shards
Revises: 0009_wallets
Create Date: 2026-11-26 23:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_shards"
down_revision = "0009_wallets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("daemon_nodes") as batch:
        batch.add_column(sa.Column("wallets", sa.JSON(), nullable=True))
    op.create_table(
        "api_rate_buckets",
        sa.Column("bucket", sa.String(length=80), nullable=False),
        sa.Column("rate", sa.Double(), nullable=False),
        sa.Column("capacity", sa.Double(), nullable=False),
        sa.Column("tokens", sa.Double(), nullable=False),
        sa.Column("refilled_at", sa.Double(), nullable=False),
        sa.Column("blocked_until", sa.Double(), nullable=False),
        sa.Column("granted", sa.Integer(), nullable=False),
        sa.Column("drawn", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("bucket", name=op.f("pk_api_rate_buckets")),
    )


def downgrade() -> None:
    op.drop_table("api_rate_buckets")
    with op.batch_alter_table("daemon_nodes") as batch:
        batch.drop_column("wallets")
