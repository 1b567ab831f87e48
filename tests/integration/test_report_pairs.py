"""Amounts are only ever added within one (input mint, output mint) pair, on SQLite
and PostgreSQL: a plan edited to trade another pair, and a batch cancel of orders in
different pairs, are reported one row per pair traded, each with its own spent,
received, refunded, fills and price; the token totals stay per token; the page's card
shows the plan's current pair and lists the others."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from jupcron.report.build import build
from jupcron.report.rows import fill_rows, table_row, totals
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from jupcron.web.views import ReportCache, fills_view, plans_view
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC

JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"


def edit(f: FollowRig, plan: PlanRecord, request: dict[str, Any]) -> PlanRecord:
    """The plan as `plans apply` leaves it after its file changed its pair."""
    with transaction(f.rig.factory) as session:
        row = session.get(Plan, plan.id)
        assert row is not None
        row.request, row.version = request, row.version + 1
        session.flush()
        return PlanRecord.from_row(row)


def by_pair(f: FollowRig, name: str) -> dict[tuple[str, str], dict[str, Any]]:
    with f.engine.connect() as conn:
        built, known = build(conn, plan=name)
    return {(r.input_mint, r.output_mint): r.as_dict(known) for r in built}  # type: ignore[misc]


def sol_then_jup(f: FollowRig) -> None:
    """Plan "buy" bought SOL with USDC, then, edited, JUP: one fill of each pair."""
    plan = f.rig.plan("swap", {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000},
                      name="buy")  # fmt: skip
    f.fire(plan)
    f.clock.advance(60)
    f.fire(edit(f, plan, {"inputMint": USDC, "outputMint": JUP, "amount": 7_000_000}))


def test_a_plan_edited_to_another_pair_reports_each_pair_apart(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    sol_then_jup(f)
    fills = {(r["input_mint"], r["output_mint"]): r for r in f.fills("buy")}
    assert set(fills) == {(USDC, SOL), (USDC, JUP)}
    rows = by_pair(f, "buy")
    assert set(rows) == {(USDC, SOL), (USDC, JUP)}
    for pair, row in rows.items():
        assert row["plan_name"] == "buy"
        assert row["fills"] == 1
        assert row["spent"] == str(fills[pair]["in_amount"])
        assert row["received"] == str(fills[pair]["out_amount"])
        assert row["runs"] == {"succeeded": 2}  # the plan's runs, on each of its rows
    assert rows[(USDC, SOL)]["output_symbol"] == "SOL"
    assert rows[(USDC, JUP)]["output_symbol"] == "JUP"
    sol_price = Decimal(str(rows[(USDC, SOL)]["average_price"]))
    assert Decimal(100) < sol_price < Decimal(200)  # USDC per SOL, not mixed with JUP
    with f.engine.connect() as conn:
        built, known = build(conn)
    # the current pair first; the table's rows and the fills keep each pair's tokens
    assert [(r.input_mint, r.output_mint) for r in built] == [(USDC, JUP), (USDC, SOL)]
    assert [table_row(r, known)["fills"] for r in built] == [1, 1]
    assert {(row["output_symbol"], row["out_amount"]) for row in fill_rows(built)} == {
        ("SOL", str(fills[(USDC, SOL)]["out_amount"])),
        ("JUP", str(fills[(USDC, JUP)]["out_amount"])),
    }
    summed = totals(built, known)
    assert (summed["plans"], summed["fills"]) == (1, 2)
    tokens = {t["mint"]: t for t in summed["tokens"]}
    assert tokens[SOL]["received"] == str(fills[(USDC, SOL)]["out_amount"])
    assert tokens[JUP]["received"] == str(fills[(USDC, JUP)]["out_amount"])
    assert tokens[USDC]["spent"] == "12000000"


def test_the_page_shows_the_current_pair_and_lists_the_others(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    sol_then_jup(f)
    cache = ReportCache()
    with f.rig.factory() as session:
        (card,) = plans_view(session, cache, f.clock.now)["plans"]
        chart = fills_view(session, cache, "buy")
    money = card["money"]
    assert (money["output_symbol"], money["fills"], money["spent"]) == ("JUP", 1, "7000000")
    (other,) = money["other_pairs"]
    assert (other["output_symbol"], other["fills"], other["spent"]) == ("SOL", 1, "5000000")
    assert "SOL" in card["text"]["other_pairs"]
    assert chart is not None
    assert (chart["output_symbol"], len(chart["fills"])) == ("JUP", 1)


def seed(f: FollowRig, making: int, taking: int, input_mint: str, output_mint: str) -> str:
    body = {"maker": f.rig.wallet.address, "makingAmount": making, "takingAmount": taking,
            "inputMint": input_mint, "outputMint": output_mint}  # fmt: skip
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {},
                                   json.dumps(body).encode())  # fmt: skip
    assert answer.status == 200, answer.body
    return str(answer.json()["order"])


def fill(f: FollowRig, order: str, making: int) -> dict[str, Any]:
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-fill", {}, {},
                                   json.dumps({"order": order, "makingAmount": making}).encode())  # fmt: skip
    assert answer.status == 200, answer.body
    return dict(answer.json()["trade"])


def test_a_batch_cancel_of_orders_in_two_pairs_keeps_the_pairs_apart(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    buy = seed(f, 5_000_000, 40_000_000, USDC, SOL)  # 5 USDC for SOL
    sell = seed(f, 20_000_000, 3_000_000, SOL, USDC)  # 0.02 SOL for USDC
    bought, sold = fill(f, buy, 2_000_000), fill(f, sell, 8_000_000)
    f.follower().poll()
    plan = f.rig.plan("trigger-cancel-batch", {"orders": [buy, sell]}, name="stop")
    f.fire(plan)
    f.follower().poll()  # cancelled, the rest of each refunded in its own mint
    rows = by_pair(f, "stop")
    assert set(rows) == {(USDC, SOL), (SOL, USDC)}
    usdc_sol, sol_usdc = rows[(USDC, SOL)], rows[(SOL, USDC)]
    assert (usdc_sol["spent"], usdc_sol["refunded"]) == ("2000000", "3000000")
    assert usdc_sol["received"] == str(bought["rawOutputAmount"])
    assert (sol_usdc["spent"], sol_usdc["refunded"]) == ("8000000", "12000000")
    assert sol_usdc["received"] == str(sold["rawOutputAmount"])
    assert (usdc_sol["refund_symbol"], sol_usdc["refund_symbol"]) == ("USDC", "SOL")
    assert usdc_sol["fills"] == sol_usdc["fills"] == 1
    with f.engine.connect() as conn:
        built, known = build(conn, plan="stop")
    tokens = {t["mint"]: t for t in totals(built, known)["tokens"]}
    assert (tokens[USDC]["spent"], tokens[USDC]["refunded"]) == ("2000000", "3000000")
    assert (tokens[SOL]["spent"], tokens[SOL]["refunded"]) == ("8000000", "12000000")
    assert tokens[USDC]["received"] == str(sold["rawOutputAmount"])
    assert tokens[SOL]["received"].startswith(str(bought["rawOutputAmount"]))
