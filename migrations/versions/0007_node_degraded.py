"""node degraded: what a daemon found not working at start and runs without
(an API or RPC node that did not answer, a wallet without SOL), from its
heartbeat, for `jupcron status` and the status page.

Revision ID: 0007_node_degraded
Revises: 0006_token_prices
Create Date: 2026-11-25 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_node_degraded"
down_revision = "0006_token_prices"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("daemon_nodes") as batch:
        batch.add_column(sa.Column("degraded", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("daemon_nodes") as batch:
        batch.drop_column("degraded")
