"""What the money did, in units a person reads, on SQLite and PostgreSQL: the
report's totals equal the emulator's ledger to the base unit; UI amounts use each
mint's own decimals (6: USDC, 8: WBTC, 9: SOL); symbols come from the token API
with and without ``rpc.url``; prices are quote per base; a cancel's refund carries
its units in the report and on the page."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest

from jupcron.follower import refresh_tokens
from jupcron.report.build import build
from jupcron.store import tokens
from jupcron.web.text import plan_text
from jupcron.web.views import _money
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC, outcome_of

WBTC = "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh"


def refresh(f: FollowRig, *, with_rpc: bool) -> None:
    rpc = f.rig.rpc() if with_rpc else None
    try:
        refresh_tokens(f.engine, f.client(), rpc, f.clock)
    finally:
        if rpc is not None:
            rpc.close()


def reports(f: FollowRig) -> dict[str, dict[str, object]]:
    with f.engine.connect() as conn:
        built, known = build(conn)
    return {r.plan_name: r.as_dict(known) for r in built}


@pytest.mark.parametrize("with_rpc", [False, True], ids=["api-only", "rpc.url"])
def test_totals_equal_the_ledger_in_each_mints_own_decimals(
    make_follow_rig: FollowRigFactory, db_url: str, with_rpc: bool
) -> None:
    f = make_follow_rig(db_url)
    pairs = {"usdc-sol": (USDC, SOL, 5_000_000), "usdc-wbtc": (USDC, WBTC, 7_000_000),
             "sol-usdc": (SOL, USDC, 30_000_000)}  # fmt: skip
    for name, (a, b, amount) in pairs.items():
        plan = f.rig.plan("swap", {"inputMint": a, "outputMint": b, "amount": amount}, name=name)
        f.fire(plan)
        f.clock.advance(60)
    refresh(f, with_rpc=with_rpc)
    rows = reports(f)
    executions = [e for e in f.rig.emulator.ledger.executions.values() if e.kind == "swap"]
    assert len(executions) == 3
    for name, (_, _, amount) in pairs.items():  # matched to the ledger by signature
        row = rows[name]
        fills = f.fills(name)
        (execution,) = [e for e in executions if e.answer["signature"] == fills[0]["signature"]]
        assert row["spent"] == execution.answer["totalInputAmount"] == str(amount)
        assert row["received"] == execution.answer["totalOutputAmount"]
    usdc_sol, usdc_wbtc, sol_usdc = rows["usdc-sol"], rows["usdc-wbtc"], rows["sol-usdc"]
    # symbols with and without rpc.url
    assert (usdc_sol["input_symbol"], usdc_sol["output_symbol"]) == ("USDC", "SOL")
    assert (usdc_wbtc["input_symbol"], usdc_wbtc["output_symbol"]) == ("USDC", "WBTC")
    assert (sol_usdc["input_symbol"], sol_usdc["output_symbol"]) == ("SOL", "USDC")
    # each amount in its mint's own decimals, exactly
    assert usdc_sol["spent_ui"] == "5.000000"
    assert usdc_wbtc["spent_ui"] == "7.000000"
    assert sol_usdc["spent_ui"] == "0.030000000"
    assert Decimal(str(usdc_sol["received_ui"])).as_tuple().exponent == -9
    assert Decimal(str(usdc_wbtc["received_ui"])).as_tuple().exponent == -8
    assert Decimal(str(sol_usdc["received_ui"])).as_tuple().exponent == -6
    assert Decimal(str(usdc_wbtc["received_ui"])) == Decimal(usdc_wbtc["received"]).scaleb(-8)
    # prices as traders quote them: the stablecoin per base, whichever side it is on
    assert (usdc_sol["price_quote"], usdc_sol["price_base"]) == ("USDC", "SOL")
    assert (sol_usdc["price_quote"], sol_usdc["price_base"]) == ("USDC", "SOL")
    assert (usdc_wbtc["price_quote"], usdc_wbtc["price_base"]) == ("USDC", "WBTC")
    for row, near in ((usdc_sol, 150), (sol_usdc, 150), (usdc_wbtc, 60_000)):
        price = Decimal(str(row["average_price"]))
        assert near * Decimal("0.95") < price < near * Decimal("1.05"), row
        # the price now (the token API's usdPrice) values what was received
        assert row["current_price"] is not None
        assert row["current_value"] is not None
        assert row["unrealised_pnl"] is not None
    # the network fee of each landed swap, in SOL, beside its lamports
    assert int(str(usdc_sol["network_fee_lamports"])) >= 5000
    assert usdc_sol["network_fee_sol"] == str(
        Decimal(str(usdc_sol["network_fee_lamports"])).scaleb(-9)
    )


def test_a_price_quote_override_turns_the_price_around(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("swap", {"inputMint": USDC, "outputMint": SOL, "amount": 3_000_000},
                      settings={"price_quote": "SOL"}, name="in-sol")  # fmt: skip
    f.fire(plan)
    refresh(f, with_rpc=False)
    row = reports(f)["in-sol"]
    assert (row["price_quote"], row["price_base"]) == ("SOL", "USDC")
    assert Decimal(str(row["average_price"])) < 1  # SOL per USDC


def test_a_cancel_refund_has_units_in_the_report_and_on_the_page(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    body = {"maker": f.rig.wallet.address, "makingAmount": 50_000_000, "takingAmount": 400_000_000,
            "inputMint": USDC, "outputMint": SOL}  # fmt: skip
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {},
                                   json.dumps(body).encode())  # fmt: skip
    order = str(answer.json()["order"])
    plan = f.rig.plan("trigger-cancel", {"order": order, "computeUnitPrice": "auto"}, name="cancel")
    f.fire(plan)
    f.clock.advance(timedelta(seconds=5).total_seconds())
    f.follower().poll()
    refresh(f, with_rpc=True)
    with f.engine.connect() as conn:
        built, known = build(conn)
    (report,) = [r for r in built if r.plan_name == "cancel"]
    row = report.as_dict(known)
    assert row["refunded"] == "50000000"
    assert (row["refunded_ui"], row["refund_symbol"]) == ("50.000000", "USDC")
    assert row["fills"] == 0
    money = _money([report], known)
    assert money is not None
    text = plan_text({"name": "cancel", "next_fires": [], "money": money, "description": None,
                      "kind": "trigger-cancel", "dry_run": False, "schedule": "once",
                      "paused": None, "last_status": "succeeded", "last_scheduled_for": None,
                      "last_error": None})  # fmt: skip
    assert text["refunded"] == "50 USDC"
    assert text["nofill"] == "no fills yet; refunded 50 USDC"


def test_the_average_price_against_the_market_over_the_same_period(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """Three buys of SOL an hour apart; the market read meanwhile (the USD prices the
    daemon stores each time it refreshes them) averages 160 USDC per SOL, while a
    price read before the first buy (outside the period) would pull it to 1,000: the
    report sets the plan's average price against the 160, not the 1,000."""
    f = make_follow_rig(db_url)
    plan = f.rig.plan("swap", {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000},
                      name="dca-ish")  # fmt: skip
    start = f.clock.now
    with f.engine.begin() as conn:
        tokens.save_price(conn, SOL, Decimal(100_000), at=start - timedelta(hours=1))
    for _ in range(3):
        f.fire(plan)
        f.clock.advance(3600)
    fills = f.fills("dca-ish")
    assert len(fills) == 3
    with f.engine.begin() as conn:
        for n, usd in enumerate((150, 160, 170)):
            at = start + timedelta(minutes=30 * (n + 1))  # inside the fills' period
            tokens.save_price(conn, SOL, Decimal(usd), at=at)
            tokens.save_price(conn, USDC, Decimal(1), at=at)
    row = reports(f)["dca-ish"]
    assert Decimal(str(row["market_price"])) == Decimal(160)
    average = Decimal(str(row["average_price"]))  # the emulator's 150, less its fee
    vs = Decimal(str(row["vs_market_bps"]))
    assert vs == ((Decimal(160) - average) / 160 * 10_000).quantize(Decimal("0.01"))
    assert vs > 0  # bought below the market of the period


def test_a_transaction_that_landed_and_failed_still_paid_its_fee(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """A swap that landed with a program error (6001, slippage) spent nothing but the
    network's fee: the report counts that fee, and no fill."""
    f = make_follow_rig(db_url)
    f.rig.emulator.faults.add("failed", operation="execute_ultra", code=6001, error="slippage")
    plan = f.rig.plan("swap", {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000},
                      name="landed-failed")  # fmt: skip
    slot = f.clock.now.replace(microsecond=0)
    run = f.rig.run(outcome_of(f.rig.runner().fire(plan, slot)).run_id)
    assert (str(run.status), run.slot is not None) == ("failed", True)
    row = reports(f)["landed-failed"]
    assert row["fills"] == 0
    assert int(str(row["network_fee_lamports"])) >= 5_000
