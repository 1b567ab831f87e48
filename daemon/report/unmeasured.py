"""Swaps whose money moved but no execute answer measured: a swap run `succeeded`
with no row in the ``fills`` view. Its execute answers were lost, and the RPC node
(``settled_by_rpc``) or the operator (`jupcron settle --landed`) said it landed: the
wallet gave up its input and got some output, which no stored answer tells. Left
out, the report said nothing had moved for it (spent 0, received 0) while the run
counted as succeeded.

Each goes to its plan's row of its wallet and pair, counted in ``unmeasured_runs``
with its input in ``unmeasured_spent``: the run's ``in_amount``, the order's, which a
swap gives up exactly (ExactIn, the only mode the swap products take). Its output
is unknown, so it joins neither spent nor received: the measured figures and their
average price stay those of the measured fills.

A swap the RPC node settled is measured from the chain when it can be (the wallet's
balance changes in the node's ``getTransaction``: `jupcron.runner.settle.chain_fill`):
that is a result row like an execute answer's (``operation`` ``chain``), status
Success with both amounts, so `_MEASURED` finds it, the ``fills`` view lists it, and
the swap is no longer here. What is left here: the operator's ``--landed`` verdicts,
and the swaps whose ``getTransaction`` could not tell (their ``chain_fill_unmeasured``
event says why)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, exists, func, select

from jupcron.domain import RunStatus
from jupcron.products.registry import PRODUCTS
from jupcron.report.pairs import PairRows
from jupcron.store.models import ExecuteResultRow, Plan, Run

# a swap's fills are its execute answers, or its balance changes read from the chain:
# the ``fills`` view's ``execute`` rows, as it defines them (read from the table: its
# unique (run, signature) index finds them);
# every other kind's fills come from the follower, whatever its runs' answers said
_E = ExecuteResultRow
_MEASURED = exists().where(
    _E.run_id == Run.id,
    _E.status == "Success",
    func.coalesce(_E.total_input_amount, _E.input_amount_result).is_not(None),
    func.coalesce(_E.total_output_amount, _E.output_amount_result).is_not(None),
)


def add(conn: Connection, rows: PairRows, since: Any, until: Any,
        only: list[str] | None = None) -> None:  # fmt: skip
    """Count each landed, unmeasured swap of the plans in `rows` (scheduled in [since,
    until), as its runs are counted) on its row."""
    stmt = (
        select(Plan.name, Run.in_amount, Run.input_mint, Run.output_mint, Run.wallet)
        .join(Plan, Plan.id == Run.plan_id)
        .where(
            Plan.kind.in_([str(kind) for kind, p in PRODUCTS.items() if p.executed_fills]),
            Run.status == str(RunStatus.SUCCEEDED),
            ~_MEASURED,
        )
    )
    if only is not None:
        stmt = stmt.where(Plan.name.in_(only))
    if since is not None:
        stmt = stmt.where(Run.scheduled_for >= since)
    if until is not None:
        stmt = stmt.where(Run.scheduled_for < until)
    for name, in_amount, input_mint, output_mint, wallet in conn.execute(stmt):
        if name not in rows.plans:
            continue
        report = rows.of(name, input_mint, output_mint, wallet)
        report.unmeasured_runs += 1
        report.unmeasured_spent += int(in_amount or 0)
