"""A landed swap's amounts read from the chain, for a swap no execute answer measured.

Its execute answers were lost, and the RPC node (`jupcron.runner.settle`) or the
operator (`jupcron settle --landed`, with the node agreeing: `jupcron.runner.manual`)
says it landed. The node's ``getTransaction`` of it shows the wallet's balance changes
(`jupcron.chain.balances`): what it gave of the input mint and got of the output. Kept
as the run's result with ``operation`` ``chain`` (so the ``fills`` view, the audit's
spent/received and `jupcron report` count it; its raw ``answer`` says ``source:
chain``, never Jupiter's word). A node that has not the transaction, or balances that
do not tell the wallet's change unambiguously, measure nothing: the reason is
returned, and the swap stays "landed, amounts unknown" in the report. Only a swap's
fills are its execute answers (`Product.executed_fills`): other kinds are measured
by the order follower.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jupcron.chain.balances import wallet_swap
from jupcron.chain.rpc import LandedTransaction, SolanaRpc
from jupcron.errors import JupcronError
from jupcron.products.registry import product
from jupcron.store.port import ExecuteValues, RunStore
from jupcron.store.records import RunRecord

UNMEASURED_STEP = "chain_fill_unmeasured"  # the run's event: why nothing was measured


@dataclass(frozen=True)
class ChainFill:
    """What a landed swap gave (`gave`, of its input mint) and got, read from its
    transaction `landed` on the chain."""

    landed: LandedTransaction
    gave: int
    got: int

    def columns(self, run: RunRecord) -> dict[str, Any]:
        """The run's columns for it, as an execute answer's amounts set them: its input
        never below what it committed (what the caps count)."""
        reserved = int(run.in_amount) if run.in_amount else 0
        return {"in_amount": str(max(reserved, self.gave)), "out_amount": str(self.got)}

    def detail(self) -> dict[str, Any]:
        """What the settling event says of it."""
        return {"slot": self.landed.slot, "fill": "chain", "in_amount": str(self.gave),
                "out_amount": str(self.got)}  # fmt: skip

    def result(self, run: RunRecord, now: datetime) -> ExecuteValues:
        """The run's result row for it (``operation`` ``chain``)."""
        landed = self.landed
        return ExecuteValues(
            run_id=run.id, signature=landed.id, operation="chain", recorded_at=now,
            status="Success", slot=landed.slot, total_input_amount=str(self.gave),
            total_output_amount=str(self.got),
            answer={"source": "chain", "method": "getTransaction", "txid": landed.id,
                    "owner": run.owner,
                    "fee": landed.balances.fee if landed.balances else None},
        )  # fmt: skip


def measure(rpc: SolanaRpc, run: RunRecord, landed_id: str | None) -> ChainFill | str:
    """The run's swap as its landed transaction (id `landed_id`) shows it; else why not
    (never a guess: see `jupcron.chain.balances`)."""
    if not (landed_id and run.owner and run.input_mint and run.output_mint):
        return "the run names no transaction, wallet or mints to measure"
    try:
        landed = rpc.transaction(landed_id)
    except JupcronError as exc:  # whatever the node did: the run is settled all the same
        return f"the node did not answer getTransaction: {exc}"
    if landed is None:
        return "the node has no transaction with this id"
    if landed.balances_problem is not None:
        return landed.balances_problem
    if landed.balances is None:
        return "the node's answer carries no balances"
    try:
        fill = wallet_swap(landed.balances, run.owner, run.input_mint, run.output_mint)
    except Exception as exc:  # noqa: BLE001 - a bug here must not hold a settlement up
        return f"the balances could not be read: {type(exc).__name__}: {exc}"
    if fill.in_amount is None or fill.out_amount is None:
        return fill.reason or "not measured"
    return ChainFill(landed, fill.in_amount, fill.out_amount)


def measure_swap(
    store: RunStore, rpc: SolanaRpc, run: RunRecord, landed_id: str | None
) -> ChainFill | str | None:
    """`measure` for a run whose fills are its execute answers (a swap's, as its plan in
    the store says); None for any other run, or one whose plan is gone."""
    plan = store.plan(run.plan_id)
    if plan is None or not product(plan.kind).executed_fills:
        return None
    return measure(rpc, run, landed_id)
