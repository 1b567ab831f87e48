"""token prices over time: every USD price read for a mint (Jupiter's Tokens V2
``usdPrice``, refreshed by the daemon), so a plan's average cost can be set against
the market over the same period.

Revision ID: 0006_token_prices
Revises: 0005_token_facts
Create Date: 2026-11-25 15:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_token_prices"
down_revision = "0005_token_facts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "token_prices",
        sa.Column("mint", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("usd_price", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("mint", "at", name=op.f("pk_token_prices")),
    )


def downgrade() -> None:
    op.drop_table("token_prices")
