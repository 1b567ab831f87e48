"""Every source of fills, on SQLite and PostgreSQL: a swap's execute result (all
its fields, also when it landed and failed), a trigger order filled in part and
then cancelled (the refund), an expired trigger order, token facts."""

from __future__ import annotations

import json

from jupcron.follower import refresh_tokens
from jupcron.store import follow, tokens
from jupcron.store.engine import begin
from jupcron.store.results import results_of
from jupcron.store.types import RunStatus
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC, outcome_of


def seed_trigger(f: FollowRig, making: int, taking: int, **extra: object) -> str:
    body = {"maker": f.rig.wallet.address, "makingAmount": making, "takingAmount": taking,
            "inputMint": USDC, "outputMint": SOL, **extra}  # fmt: skip
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-orders", {}, {},
                                   json.dumps(body).encode())  # fmt: skip
    assert answer.status == 200, answer.body
    return str(answer.json()["order"])


def test_a_swap_stores_every_result_field_and_its_output_is_in_the_report(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("swap", name="swap")
    run_id = f.fire(plan)
    with begin(f.engine) as conn:
        stored = results_of(conn, run_id)
    assert len(stored) == 1
    result = stored[0]
    answer = result["answer"]  # the raw answer is kept whole
    assert result["status"] == answer["status"] == "Success"
    assert result["slot"] == int(answer["slot"])
    assert result["signature"] == answer["signature"] == f.rig.run(run_id).signature
    assert result["total_input_amount"] == answer["totalInputAmount"] == "5000000"
    assert result["total_output_amount"] == answer["totalOutputAmount"]
    assert result["input_amount_result"] == answer["inputAmountResult"]
    assert result["output_amount_result"] == answer["outputAmountResult"]
    events = result["swap_events"]
    assert [(e["amm"], e["input_amount"], e["output_amount"]) for e in events] == [
        (e["amm"], e["inputAmount"], e["outputAmount"]) for e in answer["swapEvents"]
    ]
    assert all(e["amm"] for e in events)
    report = f.report("swap")
    assert report.received == int(answer["outputAmountResult"])  # no fee in the output mint
    assert report.spent == int(answer["totalInputAmount"])
    fee = int(answer["totalInputAmount"]) - int(answer["inputAmountResult"])
    assert fee > 0
    assert report.fees == {USDC: fee}
    assert [r["source"] for r in f.fills("swap")] == ["execute"]


def test_a_landed_but_failed_swap_keeps_its_amounts_and_is_no_fill(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("swap", name="slipped")
    error = "Slippage tolerance exceeded"
    f.rig.emulator.faults.add("failed", operation="execute_ultra", code=6001, error=error)
    outcome = outcome_of(f.rig.runner().fire(plan, f.clock.now.replace(microsecond=0)))
    assert outcome.status is RunStatus.FAILED
    with begin(f.engine) as conn:
        (result,) = results_of(conn, outcome.run_id)
    assert (result["status"], result["code"], result["error"]) == ("Failed", "6001", error)
    assert result["slot"] > 0  # it landed
    assert result["total_input_amount"] == "5000000"
    assert result["output_amount_result"] is not None
    assert len(result["swap_events"]) == 2
    assert f.fills("slipped") == []  # a failed transaction traded nothing
    assert f.report("slipped").spent == 0
    assert f.sql(
        "SELECT spent, received, fills FROM audit WHERE run_id = :r", r=outcome.run_id
    ) == [{"spent": None, "received": None, "fills": 0}]


def test_a_trigger_cancel_refund_and_the_fills_before_it_are_in_the_report(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    order = seed_trigger(f, making=5_000_000, taking=40_000_000)
    answer = f.rig.emulator.handle("POST", "/_emulator/trigger-fill", {}, {},
                                   json.dumps({"order": order, "makingAmount": 2_000_000}).encode())  # fmt: skip
    assert answer.status == 200
    trade = answer.json()["trade"]
    f.follower().poll()  # open, one trade so far
    plan = f.rig.plan("trigger-cancel", {"order": order, "computeUnitPrice": "auto"}, name="cancel")
    run_id = f.fire(plan)
    f.follower().poll()  # now in the history: cancelled, the rest refunded
    report = f.report("cancel")
    assert report.refunded == 3_000_000 == f.rig.emulator.ledger.trigger_orders[order].refunded
    assert report.spent == 2_000_000
    assert report.received == int(trade["rawOutputAmount"])
    assert report.fees == {SOL: int(trade["rawFeeAmount"])}
    fills = f.fills("cancel")
    assert [(r["source"], r["run_id"], r["signature"]) for r in fills] == [
        ("trigger", run_id, trade["txId"])
    ]
    with begin(f.engine) as conn:
        (event,) = follow.events(conn, "order_cancelled")
    assert event["detail"]["refunded"] == "3000000"
    assert event["run_id"] == run_id
    audit = f.sql("SELECT refunded, fills FROM audit WHERE run_id = :r", r=run_id)[0]
    assert (audit["refunded"], audit["fills"]) == ("3000000", 1)


def test_an_expired_trigger_order_is_recorded_with_what_it_gave_back(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    order = seed_trigger(f, making=1_000_000, taking=8_000_000,
                         expiredAt=int(f.clock.wall()) + 3600)  # fmt: skip
    plan = f.rig.plan("trigger-cancel", {"order": order}, name="expiring")
    # the cancel fires after the order expired: the API has nothing to cancel, which is
    # recorded as such (skipped, order_gone), not as a failure (issue 28)
    f.clock.advance(7200)
    outcome = outcome_of(f.rig.runner().fire(plan, f.clock.now.replace(microsecond=0)))
    assert (outcome.status, outcome.error_code) == (RunStatus.SKIPPED, "order_gone")
    f.follower().poll()
    with begin(f.engine) as conn:
        (event,) = follow.events(conn, "order_expired")
    assert event["detail"]["refunded"] == "1000000"
    assert f.report("expiring").refunded == 1_000_000


def test_token_facts_come_from_the_token_api_and_the_mint_account(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    f.rig.plan("swap", name="swap")
    stored = refresh_tokens(f.engine, f.client(), None, f.clock)
    assert sorted(stored) == sorted([USDC, SOL])
    with begin(f.engine) as conn:
        known = tokens.stored(conn)
    assert (known[USDC].decimals, known[USDC].symbol, known[USDC].source) == (6, "USDC", "api")
    assert known[USDC].program == "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
    assert known[SOL].decimals == 9
    assert known[SOL].symbol == "SOL"
    assert known[SOL].usd_price is not None
    assert known[SOL].priced_at == f.clock()
    assert refresh_tokens(f.engine, f.client(), None, f.clock) == []  # cached: no call
    with begin(f.engine) as conn:
        conn.execute(tokens.TOKENS.delete())
    rpc = f.rig.rpc()
    try:
        stored = refresh_tokens(f.engine, f.client(), rpc, f.clock)
    finally:
        rpc.close()
    with begin(f.engine) as conn:
        known = tokens.stored(conn)
    # with rpc.url the mint account speaks for decimals and program, the API for the symbol
    assert (known[USDC].decimals, known[USDC].symbol, known[USDC].source) == (
        6,
        "USDC",
        "api+chain",
    )
    assert known[SOL].decimals == 9
    assert known[SOL].symbol == "SOL"
    assert tokens.human(1_500_000, 6) == tokens.Token(USDC, 6, None, "chain").human(1_500_000)
    assert str(tokens.human(1_500_000, 6)) == "1.500000"
