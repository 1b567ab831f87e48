"""A swap whose execute answers were all lost lands all the same: what the money did
must not then vanish from `jupcron report`. Settled by the RPC node, its amounts are
read from its transaction on the chain and it is measured like any fill; settled by the
operator (no node), its input (the order's ExactIn amount, exactly what the signed
transaction gives up) is counted as landed and unmeasured beside the measured figures,
never mixed into them (no output is known: an average over it would be wrong). On
SQLite and PostgreSQL, the emulator over loopback, the real runner."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.report.build import build
from jupcron.report.plan import PlanReport
from jupcron.report.rows import table_row, total_lines, totals
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from jupcron.web.text import plan_text
from jupcron.web.views import _money
from tests.fixtures.runner import ONE_ATTEMPT, SOL, USDC, Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PLAN = "settled"


def _fire(rig: Rig, plan: PlanRecord, slot: datetime) -> int:
    rpc = rig.rpc()
    try:
        outcome = outcome_of(rig.runner(rpc=rpc).fire(plan, slot))
    finally:
        rpc.close()
    assert outcome.status is RunStatus.SUCCEEDED, (outcome.error, rig.steps(outcome.run_id))
    return outcome.run_id


def _report(rig: Rig) -> PlanReport:
    with rig.engine.connect() as conn:
        (report,), _ = build(conn, plan=PLAN)
    return report


def test_a_swap_settled_from_the_chain_is_in_the_figures_with_the_chains_amounts(
    make_rig: RigFactory, db_url: str
) -> None:
    """Settled by the RPC node, its amounts are read from its transaction there
    (``getTransaction``'s balances: `jupcron.chain.balances`): measured, exactly what
    the ledger moved, and nothing left unmeasured."""
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, db_url=db_url, api=ONE_ATTEMPT, swap_api="swap-v2",
                   emulator=Emulator(seed=11, clock=clock.wall))  # fmt: skip
    ledger = rig.emulator.ledger
    wallet = rig.wallet.address
    start = (ledger.balance(wallet, USDC), ledger.balance(wallet, SOL))

    plan = rig.plan("swap", name=PLAN)
    measured = _fire(rig, plan, SLOT)  # answered: an execute fill
    rig.emulator.faults.add("lost_answer", count=0, operation="execute_swap")
    clock.advance(3600)
    settled = _fire(rig, plan, SLOT + timedelta(hours=1))  # every answer lost: settled by RPC
    assert rig.steps(settled)[-1] == "settled_by_rpc"
    assert rig.steps(measured)[-1] != "settled_by_rpc"

    gave = start[0] - ledger.balance(wallet, USDC)
    got = ledger.balance(wallet, SOL) - start[1]
    assert gave == 2 * 5_000_000  # both swaps moved money
    assert got > 0

    report = _report(rig)
    shown = report.as_dict({})
    assert shown["runs"] == {"succeeded": 2}
    assert shown["fills"] == 2  # the answered swap, and the one the chain measured
    assert not shown.get("unmeasured_runs")
    assert (int(shown["spent"]), int(shown["received"])) == (gave, got)
    assert {f.run_id for f in report.fills} == {measured, settled}
    row = table_row(report, {})
    assert (row["fills"], row["spent"]) == (2, "10 USDC")
    assert "not in these figures" not in total_lines(totals([report], {}))


def _card(rig: Rig, money: dict[str, Any] | None) -> dict[str, Any]:
    """A plan's page entry as `plan_text` reads it: only the money matters here."""
    return {"name": PLAN, "description": None, "kind": "swap", "dry_run": False,
            "schedule": "every hour", "paused": None, "next_fires": [], "last_status": None,
            "last_scheduled_for": None, "last_error": None, "wallet": "default",
            "money": money}  # fmt: skip


def test_a_swap_the_operator_settled_as_landed_is_unmeasured(
    make_rig: RigFactory, db_url: str
) -> None:
    """An in_doubt swap (no RPC node: nothing could settle it, nor measure it) that the
    operator says landed (`jupcron settle --landed`): its money counted as landed and
    unmeasured, beside the measured fill of an answered swap, never mixed into it."""
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, db_url=db_url, api=ONE_ATTEMPT,
                   emulator=Emulator(seed=11, clock=clock.wall))  # fmt: skip
    ledger = rig.emulator.ledger
    wallet = rig.wallet.address
    start = (ledger.balance(wallet, USDC), ledger.balance(wallet, SOL))
    plan = rig.plan("swap", name=PLAN)
    measured = outcome_of(rig.runner().fire(plan, SLOT))  # answered: an execute fill
    assert measured.status is RunStatus.SUCCEEDED
    clock.advance(3600)
    run_id = rig.in_doubt_swap(plan, SLOT + timedelta(hours=1), clock)
    assert _report(rig).as_dict({}).get("unmeasured_runs", 0) == 0  # in doubt: not counted
    settle_in_doubt(SqlRunStore(rig.engine), run_id,
                    Verdict(landed=True, reason="found it", by="op"), now=clock())  # fmt: skip
    gave = start[0] - ledger.balance(wallet, USDC)
    got = ledger.balance(wallet, SOL) - start[1]
    assert gave == 2 * 5_000_000  # both swaps moved money

    report = _report(rig)
    shown = report.as_dict({})
    assert shown["runs"] == {"succeeded": 2}
    assert (shown["fills"], shown.get("unmeasured_runs")) == (1, 1)
    assert shown.get("unmeasured_spent") == "5000000"
    # every unit that left the wallet is in the report: measured, or unmeasured
    assert int(shown["spent"]) + int(shown["unmeasured_spent"]) == gave
    assert int(shown["received"]) < got  # the settled swap's output is not known
    # the average price is over the measured fill only: 5 USDC for what it received
    (fill,) = report.fills
    assert (fill.run_id, fill.in_amount) == (measured.run_id, 5_000_000)
    assert report.received == fill.out_amount
    row = table_row(report, {})
    assert row["fills"] == "1 (+1 landed, amounts unknown)"
    assert row["spent"] == "5 USDC (+5 USDC unmeasured)"
    (token,) = [t for t in totals([report], {})["tokens"] if t["mint"] == USDC]
    assert int(token["spent"]) + int(token["unmeasured_spent"]) == gave
    assert "not in these figures: 1 swaps that landed" in total_lines(totals([report], {}))
    # the status page's card, from the figures the page builds
    with rig.engine.connect() as conn:
        reports, known = build(conn, names=[PLAN])
    card = plan_text(_card(rig, _money(reports, known)))
    assert card["spent"] == "5 USDC (+5 USDC unmeasured)"
    assert card["fills"] == "1 (+1 landed, amounts unknown)"
