"""Price protection against the emulator: the reference read from its Pyth feed
accounts over loopback HTTP (and stale once frozen), its quotes following the
feeds, and runs on SQLite and PostgreSQL: a quote beyond the plan's limit is
skipped with nothing signed, a fair swap passes with the reference on record, a
hostile quote far below the market is skipped for a plan with a limit and
refused by the guard for a plan that relies on the reference; a route whose
minimum out breaks the limit is refused; a stale reference refuses by default;
an order answer for another input amount than the plan's is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from jupcron.api.client import JupiterClient
from jupcron.chain.rpc import SolanaRpc
from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.emulator.transport import in_process_transport
from jupcron.price.oracle import DEFAULT_FEEDS, decode_price_update
from jupcron.price.protection import protection_for
from jupcron.report.build import build
from jupcron.report.rows import fill_rows
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.runner import USDC, Clock, Rig, RigFactory, outcome_of

SOL = "So11111111111111111111111111111111111111112"
V2 = "swap-v2"
BUY_AT_MOST_250 = {"limits": {"max_price": 250, "quote": "USDC"}}  # market: 150 USDC/SOL
BUY_AT_MOST_100 = {"limits": {"max_price": 100, "quote": "USDC"}}  # below the market


def control(rig: Rig, path: str, body: Any) -> Any:
    answer = rig.emulator.handle("POST", f"/_emulator/{path}", {}, {}, json.dumps(body).encode())
    assert answer.status == 200, answer.body
    return answer.json()


def test_the_reference_is_read_over_loopback_and_goes_stale_when_frozen(
    make_rig: RigFactory,
) -> None:
    clock = Clock(datetime.now(UTC).replace(microsecond=0))
    rig = make_rig(loopback=True, clock=clock)
    rpc = SolanaRpc(rig.url + "/rpc")
    try:
        (state,) = rpc.accounts([DEFAULT_FEEDS[SOL].account])
        assert state is not None
        price = decode_price_update(state.data)
        assert (price.value, price.publish_time, price.full) == (Decimal(150), int(clock.wall()),
                                                                 True)  # fmt: skip
        plan = rig.plan("swap", settings=BUY_AT_MOST_250)  # 5 USDC -> SOL
        fresh = protection_for(plan, 5_000_000, rpc, rig.config, clock())
        assert (fresh.min_out, fresh.reference_out, fresh.problem) == (20_000_000, 33_333_333, None)

        control(rig, "oracle", {"mint": "SOL", "freeze": True})
        clock.advance(rig.config.price.max_age + 1)
        stale = protection_for(plan, 5_000_000, rpc, rig.config, clock())
        assert stale.reference_out is None
        assert stale.problem is not None
        assert "stale" in stale.problem

        control(rig, "oracle", {"mint": "SOL", "freeze": False, "price": "200"})
        moved = protection_for(plan, 5_000_000, rpc, rig.config, clock())
        assert (moved.reference_out, moved.problem) == (25_000_000, None)
    finally:
        rpc.close()


def test_quotes_follow_the_feed(make_rig: RigFactory) -> None:
    rig = make_rig()
    query = {"inputMint": USDC, "outputMint": SOL, "amount": "5000000"}
    before = int(rig.emulator.handle("GET", "/ultra/v1/order", query, {}, b"").json()["outAmount"])
    control(rig, "oracle", {"mint": SOL, "price": 300})
    after = int(rig.emulator.handle("GET", "/ultra/v1/order", query, {}, b"").json()["outAmount"])
    assert before == 33_300_000  # 5 USDC at 150, less the 10 bps fee
    assert after == before // 2


def _swap_rig(make_follow_rig: FollowRigFactory, db_url: str) -> Rig:
    return make_follow_rig(db_url, days_ago=0, swap_api=V2).rig


def test_a_quote_beyond_the_limit_is_skipped_and_nothing_is_signed(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    rig = _swap_rig(make_follow_rig, db_url)
    plan = rig.plan("swap", settings=BUY_AT_MOST_100, name="limited")
    assert rig.clock is not None
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SKIPPED
    assert run.error is not None
    assert "price limit" in run.error
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.steps(run.id)[-1] == "price_limit_skip"
    assert rig.landed() == []
    assert rig.emulator.ledger.requests.get("execute_swap", 0) == 0
    (detail,) = [d for _, step, d in rig.events(run.id) if step == "price_limit_skip"]
    assert detail["price"]["min_out"] == "50000000"  # 5 USDC at <= 100 USDC/SOL: 0.05 SOL


def test_a_fair_swap_passes_with_its_reference_on_record(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    rig = _swap_rig(make_follow_rig, db_url)
    plan = rig.plan("swap", settings=BUY_AT_MOST_250, name="fair")
    assert rig.clock is not None
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert detail["price"]["min_out"] == "20000000"
    assert detail["price"]["reference_out"] == "33333333"
    assert detail["price"]["reference"]["reference_price"] == "0.00666666666667"
    with rig.engine.connect() as conn:
        (report,), known = build(conn, plan="fair")
    (fill,) = report.fills
    assert fill.reference_out == 33_333_333
    vs = report.vs_reference_bps()
    assert vs is not None
    assert Decimal(-20) < vs < 0  # the emulator's 10 bps fee, and nothing worse
    (row,) = fill_rows([report])  # `jupcron report --fills`: each fill against its reference
    assert row["vs_reference_bps"] == str(fill.vs_reference_bps)
    assert Decimal(-20) < Decimal(row["vs_reference_bps"]) < 0
    as_json = report.as_dict(known)
    assert as_json["vs_reference_bps"] == str(vs)
    assert as_json["reference_price"] is not None
    assert {"plan_name", "spent", "received", "fills", "runs"} <= set(as_json)


def test_a_hostile_quote_far_below_the_market_is_skipped_for_a_limited_plan(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    rig = _swap_rig(make_follow_rig, db_url)
    control(rig, "faults", {"kind": "low_quote", "operation": "swap_order", "factor": "0.01"})
    plan = rig.plan("swap", settings=BUY_AT_MOST_250, name="hostile")
    assert rig.clock is not None
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.SKIPPED
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []


def test_a_stale_reference_refuses_to_sign_by_default(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """The feed frozen for a day: the reference is stale, and under the default policy
    (`price.on_stale: refuse`) the guard refuses the run; the reference is on record."""
    rig = _swap_rig(make_follow_rig, db_url)
    control(rig, "oracle", {"mint": SOL, "freeze": True})
    assert rig.clock is not None
    rig.clock.advance(timedelta(days=1).total_seconds())
    plan = rig.plan("swap", settings=BUY_AT_MOST_250, name="stale")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    events = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert events
    assert "stale" in events[0]["price"]["problem"]
    assert events[0]["price"]["reference_out"] is None
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.REJECTED
    assert run.error is not None
    assert "price protection cannot vouch" in run.error
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []


def test_a_stale_reference_signs_with_a_warning_when_the_policy_says_so(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    rig = _swap_rig(make_follow_rig, db_url)
    rig.config = rig.config.model_copy(
        update={"price": rig.config.price.model_copy(update={"on_stale": "warn"})}
    )
    control(rig, "oracle", {"mint": SOL, "freeze": True})
    assert rig.clock is not None
    rig.clock.advance(timedelta(days=1).total_seconds())
    plan = rig.plan("swap", settings=BUY_AT_MOST_250, name="stale-warn")
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "ordered"]
    assert "stale" in detail["price"]["warning"]


def test_a_route_whose_minimum_out_breaks_the_limit_is_refused(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """A fair quote (not skipped), but the route allows 90% slippage (the plan allows
    it): its guaranteed minimum out is below the plan's limit and far below the
    reference, so the guard refuses it; nothing is signed."""
    rig = _swap_rig(make_follow_rig, db_url)
    request = {"inputMint": USDC, "outputMint": SOL, "amount": 5_000_000, "slippageBps": 9000}
    plan = rig.plan("swap", request=request, settings=BUY_AT_MOST_250, name="loose")
    assert rig.clock is not None
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.REJECTED, run.error
    assert run.error is not None
    assert "below the plan's limit of 20000000" in run.error
    assert "below the 33333333 an independent price implies" in run.error
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []


def test_a_hostile_quote_is_refused_for_a_plan_that_relies_on_the_reference(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """No limit in the plan: the quote is not skipped, but the transaction's minimum
    out is far below what the independent price implies: refused, nothing signed."""
    rig = _swap_rig(make_follow_rig, db_url)
    control(rig, "faults", {"kind": "low_quote", "operation": "swap_order", "factor": "0.01"})
    plan = rig.plan("swap", name="reference-only")
    assert rig.clock is not None
    outcome = outcome_of(rig.runner(rpc=rig.rpc()).fire(plan, rig.clock.now))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.REJECTED, run.error
    assert run.error is not None
    assert "an independent price implies" in run.error
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []
    assert rig.emulator.ledger.requests.get("execute_swap", 0) == 0


class InAmountSays(httpx.BaseTransport):
    """The API's swap order answers with its ``inAmount`` rewritten (None: removed)."""

    def __init__(self, inner: httpx.BaseTransport, in_amount: str | None) -> None:
        self.inner, self.in_amount = inner, in_amount

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if not request.url.path.endswith("/order"):
            return response
        response.read()
        body = json.loads(response.content)
        body.pop("inAmount")
        if self.in_amount is not None:
            body["inAmount"] = self.in_amount
        return httpx.Response(response.status_code, json=body)


@pytest.mark.parametrize(
    ("api", "in_amount"),
    [(V2, "0"), (V2, "1000000"), (V2, "5000001"), (V2, None), ("ultra-v1", "0")],
)
def test_an_answer_for_another_input_amount_is_refused(
    make_rig: RigFactory, api: str, in_amount: str | None
) -> None:
    """A quote at 1% of the market (skipped under the plan's min_out when its answer is
    honest) whose answer claims another inAmount: it once switched the limit off
    ("0") or shrank it; now the run is refused at the order step, nothing signed."""
    rig = make_rig(swap_api=api)
    control(rig, "faults", {"kind": "low_quote", "operation": "swap_order", "factor": "0.01"})
    inner = rig.transport or in_process_transport(rig.emulator, sleep=lambda s: None)
    rig.api = JupiterClient.from_config(rig.config, None,
                                        transport=InAmountSays(inner, in_amount))  # fmt: skip
    plan = rig.plan("swap", settings={"limits": {"min_out": 20_000_000}}, name="claims")
    outcome = outcome_of(rig.runner().fire(plan, datetime.now(UTC)))
    run = rig.run(outcome.run_id)
    assert run.status is RunStatus.REJECTED, run.error
    assert rig.steps(run.id)[-1] == "amount_refused"
    assert run.error is not None
    assert "the plan spends 5000000" in run.error
    said = "states no input amount" if in_amount is None else f"spends {in_amount} (inAmount)"
    assert said in run.error
    assert (run.signed_tx, run.signature) == (None, None)
    assert rig.landed() == []


def test_emulator_reset_unfreezes_the_feeds() -> None:
    emu = Emulator()
    emu.handle("POST", "/_emulator/oracle", {}, {}, b'{"mint": "SOL", "age": 600, "price": 9}')
    emu.handle("POST", "/_emulator/reset", {}, {}, b"")
    feeds = emu.handle("GET", "/_emulator/oracle", {}, {}, b"").json()["feeds"]
    sol = next(f for f in feeds if f["mint"] == SOL)
    assert (sol["price"], sol["frozen"]) == ("150", False)
