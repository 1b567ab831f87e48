"""wallets: several wallets share one store. Each plan names the configured wallet
that signs its runs (``plans.wallet``), each run records the wallet it is for
(``runs.wallet``, the wallet's configured name), and the audit view gains a
``wallet`` column (last, every earlier column kept). Every plan and run stored
before this was the one wallet's: ``default``, the name of ``wallet.keypair``.

Revision ID: 0009_wallets
Revises: 0008_runways
Create Date: 2026-11-26 23:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_wallets"
down_revision = "0008_runways"
branch_labels = None
depends_on = None

WALLET = sa.String(length=64)

# the views as 0003 made them (frozen text): what the downgrade puts back
FILLS_VIEW_0003 = """
CREATE VIEW fills AS
SELECT p.name AS plan_name,
       r.id AS run_id,
       COALESCE(e.order_account, r.order_account) AS order_account,
       e.signature AS signature,
       r.input_mint AS input_mint,
       COALESCE(e.total_input_amount, e.input_amount_result) AS in_amount,
       r.output_mint AS output_mint,
       COALESCE(e.total_output_amount, e.output_amount_result) AS out_amount,
       e.recorded_at AS filled_at,
       'execute' AS source,
       CAST(NULL AS VARCHAR(64)) AS fee_mint,
       CAST(NULL AS VARCHAR(40)) AS fee_amount
FROM execute_results e
JOIN runs r ON r.id = e.run_id
JOIN plans p ON p.id = r.plan_id
WHERE e.status = 'Success'
  AND COALESCE(e.total_input_amount, e.input_amount_result) IS NOT NULL
  AND COALESCE(e.total_output_amount, e.output_amount_result) IS NOT NULL
UNION ALL
SELECT p.name AS plan_name,
       r.id AS run_id,
       t.order_account AS order_account,
       t.tx_id AS signature,
       t.input_mint AS input_mint,
       t.in_amount AS in_amount,
       t.output_mint AS output_mint,
       t.out_amount AS out_amount,
       t.confirmed_at AS filled_at,
       t.source AS source,
       t.fee_mint AS fee_mint,
       t.fee_amount AS fee_amount
FROM order_trades t
JOIN runs r ON r.id = t.run_id
JOIN plans p ON p.id = r.plan_id
WHERE t.action = 'Fill'
"""

AUDIT_VIEW_0003 = """
CREATE VIEW audit AS
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

# the audit view from here on: 0003's, and the run's wallet as its last column
AUDIT_VIEW_0009 = """
CREATE VIEW audit AS
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
       (SELECT COUNT(*) FROM fills f WHERE f.run_id = r.id) AS fills,
       r.wallet AS wallet
FROM runs r JOIN plans p ON p.id = r.plan_id
"""


def upgrade() -> None:
    op.execute("DROP VIEW audit")
    for table in ("plans", "runs"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("wallet", WALLET, server_default="default", nullable=False)
            )
    op.execute(AUDIT_VIEW_0009)


def downgrade() -> None:
    # both views read the tables: they go first and come back as 0003 made them; the
    # columns go by ALTER TABLE … DROP COLUMN on SQLite too (3.35+), as copying the
    # plans table would break the runs' foreign key to it
    op.execute("DROP VIEW audit")
    op.execute("DROP VIEW fills")
    for table in ("runs", "plans"):
        with op.batch_alter_table(table, schema=None, recreate="never") as batch_op:
            batch_op.drop_column("wallet")
    op.execute(FILLS_VIEW_0003)
    op.execute(AUDIT_VIEW_0003)
