"""token facts: each mint's token program, name and last USD price (Jupiter's
Tokens V2 answer, checked against the mint account where ``rpc.url`` is set),
and the mints of every followed order (a refund's units).

Revision ID: 0005_token_facts
Revises: 0004_control
Create Date: 2026-11-25 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_token_facts"
down_revision = "0004_control"
branch_labels = None
depends_on = None

PUBKEY = sa.String(length=64)
WHEN = sa.DateTime(timezone=True)
AUDIT_VIEW_0003 = """CREATE VIEW audit AS
SELECT r.id AS run_id,
       p.name AS plan_name,
       p.kind AS kind,
       r.plan_version AS plan_version,
       r.scheduled_for AS scheduled_for,
       r.status AS status,
       r.trigger AS trigger,
       r.request_id AS request_id,
       r.signature AS signature,
       r.error_code AS error_code,
       r.error AS error,
       r.input_mint AS input_mint,
       r.in_amount AS in_amount,
       r.output_mint AS output_mint,
       r.out_amount AS out_amount,
       r.order_account AS order_account,
       r.slot AS slot,
       r.attempts AS attempts,
       r.created_at AS created_at,
       r.updated_at AS updated_at,
       r.finished_at AS finished_at,
       (SELECT CAST(SUM(CAST(f.in_amount AS NUMERIC)) AS VARCHAR(40))
          FROM fills f WHERE f.run_id = r.id) AS spent,
       (SELECT CAST(SUM(CAST(f.out_amount AS NUMERIC)) AS VARCHAR(40))
          FROM fills f WHERE f.run_id = r.id) AS received,
       (SELECT CAST(SUM(CAST(o.refunded AS NUMERIC)) AS VARCHAR(40))
          FROM followed_orders o WHERE o.run_id = r.id) AS refunded,
       (SELECT COUNT(*) FROM fills f WHERE f.run_id = r.id) AS fills
FROM runs r JOIN plans p ON p.id = r.plan_id
"""


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("token_program", PUBKEY, nullable=True))
        batch_op.add_column(sa.Column("usd_price", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("priced_at", WHEN, nullable=True))
    with op.batch_alter_table("followed_orders", schema=None) as batch_op:
        batch_op.add_column(sa.Column("input_mint", PUBKEY, nullable=True))
        batch_op.add_column(sa.Column("output_mint", PUBKEY, nullable=True))


def downgrade() -> None:
    # SQLite drops a column by copying the table, which the audit view reads: the view
    # goes first and comes back as it was (frozen text, as 0003 made it)
    op.execute("DROP VIEW audit")
    with op.batch_alter_table("followed_orders", schema=None) as batch_op:
        batch_op.drop_column("output_mint")
        batch_op.drop_column("input_mint")
    op.execute(AUDIT_VIEW_0003)
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_column("priced_at")
        batch_op.drop_column("usd_price")
        batch_op.drop_column("token_program")
        batch_op.drop_column("name")
