"""fills: execute results, swap events, order trades, followed orders, follow
events, tokens; the fills view and the audit view with spent/received.

Revision ID: 0003_fills
Revises: 0001
Create Date: 2026-11-23 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from jupcron.store.models import AUDIT_VIEW_SQL as AUDIT_VIEW_BEFORE
from jupcron.store.views import AUDIT_VIEW_SQL, FILLS_VIEW_SQL

revision = "0003_fills"
down_revision = "0001"
branch_labels = None
depends_on = None

AMOUNT = sa.String(length=40)
PUBKEY = sa.String(length=64)
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "execute_results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("signature", sa.String(length=100), nullable=False),
        sa.Column("operation", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=True),
        sa.Column("code", sa.String(length=32), nullable=True),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("slot", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("order_account", PUBKEY, nullable=True),
        sa.Column("total_input_amount", AMOUNT, nullable=True),
        sa.Column("total_output_amount", AMOUNT, nullable=True),
        sa.Column("input_amount_result", AMOUNT, nullable=True),
        sa.Column("output_amount_result", AMOUNT, nullable=True),
        sa.Column("answer", sa.JSON(), nullable=False),
        sa.Column("recorded_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_execute_results_run_id_runs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_execute_results")),
        sa.UniqueConstraint("run_id", "signature", name="uq_execute_results_run_sig"),
    )
    op.create_table(
        "swap_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("amm", PUBKEY, nullable=True),
        sa.Column("input_mint", PUBKEY, nullable=False),
        sa.Column("input_amount", AMOUNT, nullable=False),
        sa.Column("output_mint", PUBKEY, nullable=False),
        sa.Column("output_amount", AMOUNT, nullable=False),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["execute_results.id"],
            name=op.f("fk_swap_events_result_id_execute_results"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_swap_events")),
        sa.UniqueConstraint("result_id", "position", name="uq_swap_events_position"),
    )
    op.create_table(
        "order_trades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("order_account", PUBKEY, nullable=False),
        sa.Column("tx_id", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("input_mint", PUBKEY, nullable=False),
        sa.Column("in_amount", AMOUNT, nullable=False),
        sa.Column("output_mint", PUBKEY, nullable=False),
        sa.Column("out_amount", AMOUNT, nullable=False),
        sa.Column("fee_mint", PUBKEY, nullable=True),
        sa.Column("fee_amount", AMOUNT, nullable=True),
        sa.Column("keeper", PUBKEY, nullable=True),
        sa.Column("confirmed_at", WHEN, nullable=False),
        sa.Column("recorded_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_order_trades_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_order_trades")),
        sa.UniqueConstraint("order_account", "tx_id", "action", name="uq_order_trades_trade"),
    )
    with op.batch_alter_table("order_trades", schema=None) as batch_op:
        batch_op.create_index("ix_order_trades_run_id", ["run_id"], unique=False)
    op.create_table(
        "followed_orders",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("order_account", PUBKEY, nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("api_status", sa.String(length=32), nullable=True),
        sa.Column("deposited", AMOUNT, nullable=True),
        sa.Column("used", AMOUNT, nullable=True),
        sa.Column("received", AMOUNT, nullable=True),
        sa.Column("refunded", AMOUNT, nullable=True),
        sa.Column("open_tx", sa.String(length=100), nullable=True),
        sa.Column("close_tx", sa.String(length=100), nullable=True),
        sa.Column("opened_at", WHEN, nullable=True),
        sa.Column("closed_at", WHEN, nullable=True),
        sa.Column("first_seen_at", WHEN, nullable=False),
        sa.Column("last_seen_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_followed_orders_run_id_runs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_followed_orders")),
        sa.UniqueConstraint("order_account", name=op.f("uq_followed_orders_order_account")),
    )
    op.create_table(
        "follow_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", WHEN, nullable=False),
        sa.Column("step", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=True),
        sa.Column("order_account", PUBKEY, nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_follow_events_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_follow_events")),
    )
    op.create_table(
        "tokens",
        sa.Column("mint", PUBKEY, nullable=False),
        sa.Column("decimals", sa.Integer(), nullable=False),
        sa.Column("symbol", sa.String(length=32), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("fetched_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("mint", name=op.f("pk_tokens")),
    )
    op.execute(FILLS_VIEW_SQL)
    op.execute("DROP VIEW audit")
    op.execute(AUDIT_VIEW_SQL)


def downgrade() -> None:
    op.execute("DROP VIEW audit")
    op.execute("DROP VIEW fills")
    op.execute(AUDIT_VIEW_BEFORE)
    op.drop_table("tokens")
    op.drop_table("follow_events")
    op.drop_table("followed_orders")
    with op.batch_alter_table("order_trades", schema=None) as batch_op:
        batch_op.drop_index("ix_order_trades_run_id")
    op.drop_table("order_trades")
    op.drop_table("swap_events")
    op.drop_table("execute_results")
