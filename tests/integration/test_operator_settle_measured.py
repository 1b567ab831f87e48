"""A swap whose execute answers were all lost, left in_doubt (no RPC node while it was
driven), that the operator settles as landed once a node is set up and finds it: its
amounts are read from its transaction there and kept with the verdict, so the report
counts it as measured, exactly what the emulator's ledger moved. On SQLite and
PostgreSQL, the emulator over loopback, the real runner and store."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text

from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.report.build import build
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.runner.recovery import recover
from jupcron.store.records import RunRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import ONE_ATTEMPT, SOL, USDC, Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PLAN = "settled"


def _in_doubt(make_rig: RigFactory, db_url: str) -> tuple[Rig, Clock, int, tuple[int, int]]:
    """A swap whose execute answers were all lost, left in_doubt: its blockhash surely
    expired and no node to ask. The rig, its clock, the run's id and the wallet's USDC
    and SOL before it."""
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, db_url=db_url, api=ONE_ATTEMPT,
                   emulator=Emulator(seed=11, clock=clock.wall))  # fmt: skip
    ledger, wallet = rig.emulator.ledger, rig.wallet.address
    start = (ledger.balance(wallet, USDC), ledger.balance(wallet, SOL))
    rig.emulator.faults.add("lost_answer", count=0, operation="execute_ultra")
    outcome = outcome_of(rig.runner().fire(rig.plan("swap", name=PLAN), SLOT))
    clock.advance(600)
    recover(rig.runner(), runs=[outcome.run_id])
    assert rig.run(outcome.run_id).status is RunStatus.IN_DOUBT, rig.steps(outcome.run_id)
    return rig, clock, outcome.run_id, start


def _settled_landed(rig: Rig, clock: Clock, run_id: int) -> RunRecord:
    """The operator's verdict "landed", with the RPC node set up now."""
    rpc = rig.rpc()
    try:
        return settle_in_doubt(SqlRunStore(rig.engine), run_id,
                               Verdict(landed=True, reason="explorer shows it", by="op"),
                               now=clock(), rpc=rpc)  # fmt: skip
    finally:
        rpc.close()


def _shown(rig: Rig) -> dict[str, Any]:
    with rig.engine.connect() as conn:
        (report,), _ = build(conn, plan=PLAN)
    return report.as_dict({})


def test_a_swap_the_operator_settles_with_the_node_agreeing_is_measured_from_the_chain(
    make_rig: RigFactory, db_url: str
) -> None:
    rig, clock, run_id, start = _in_doubt(make_rig, db_url)
    ledger, wallet = rig.emulator.ledger, rig.wallet.address
    settled = _settled_landed(rig, clock, run_id)
    gave = start[0] - ledger.balance(wallet, USDC)
    got = ledger.balance(wallet, SOL) - start[1]
    assert (gave, got > 0) == (5_000_000, True)
    assert settled.status is RunStatus.SUCCEEDED
    assert (settled.in_amount, settled.out_amount) == (str(gave), str(got))
    shown = _shown(rig)
    assert (shown["fills"], shown.get("unmeasured_runs") or 0) == (1, 0)
    assert (int(shown["spent"]), int(shown["received"])) == (gave, got)
    (_, step, detail) = rig.events(run_id)[-1]
    assert (step, detail["fill"], detail["out_amount"]) == ("settled_by_operator", "chain",
                                                           str(got))  # fmt: skip


def test_a_swap_the_node_cannot_measure_is_settled_unmeasured_and_says_why(
    make_rig: RigFactory, db_url: str
) -> None:
    """The node finds it landed but its balances do not show the run's wallet (here the
    run's recorded owner is another key): the verdict is kept, nothing is measured, and
    the event says why; the report counts it as landed with amounts unknown."""
    rig, clock, run_id, _ = _in_doubt(make_rig, db_url)
    with rig.engine.begin() as conn:
        conn.execute(
            text("UPDATE runs SET owner = :owner WHERE id = :id"),
            {"owner": "11111111111111111111111111111112", "id": run_id},
        )
    settled = _settled_landed(rig, clock, run_id)
    assert settled.status is RunStatus.SUCCEEDED
    assert settled.out_amount is None
    (_, step, detail) = rig.events(run_id)[-1]
    assert step == "settled_by_operator"
    assert "fill" not in detail
    assert "wallet" in detail["chain_fill_unmeasured"], detail
    shown = _shown(rig)
    assert (shown["fills"], shown.get("unmeasured_runs")) == (0, 1)
