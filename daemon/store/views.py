"""The SQL views for people (contracts, DESIGN §3), the same text on SQLite and
PostgreSQL: what the head migration leaves in the database. Migrations carry
their own frozen copies; a change here is a new migration that replaces the
view (tests/integration/test_schema_head.py fails until there is one).

``fills``: one row per trade or execution result that moved money for a plan:
    source ``execute``   an execute answer with status Success and amounts (swaps);
                         in/out = totalInputAmount/totalOutputAmount (what left and
                         reached the wallet), else inputAmountResult/outputAmountResult
    source ``recurring`` a ``Fill`` trade of a recurring order one of our runs created
    source ``trigger``   a ``Fill`` trade of a trigger order one of our runs cancels
Orders no run of ours placed or manages are never stored, so never in here.

``audit`` (replaced, every earlier column kept) adds what the run actually did
with money, as base units in decimal text like ``in_amount``:
    spent     input given up in the run's fills (NULL: no fill)
    received  output got from the run's fills (NULL: no fill)
    refunded  input a cancel or close of the run's order gave back
    fills     how many fills
    wallet    the wallet (its configured name) the run was for (`default`: wallet.keypair)
"""

from __future__ import annotations

FILLS_VIEW_SQL = """
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

AUDIT_VIEW_SQL = """
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
