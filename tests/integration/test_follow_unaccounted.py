"""Review 18j: an order of ours that the listings cannot explain, on SQLite and
PostgreSQL through the emulator over loopback.

Jupiter's listings know two states, ``active`` and ``history`` (the Recurring and
Trigger v1 docs: ``orderStatus`` is one or the other). An order of ours found in
neither for long, or still active well past its expected end (numberOfOrders x
interval, the recurring docs' "total time to complete"), is money sitting where we
cannot see it: the follower says so once (an event and a warning), not per poll,
and never stops looking for it; and it does not read the wallet's whole history at
every poll on its account."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from solders.signature import Signature
from sqlalchemy import text
from structlog.testing import capture_logs

from jupcron.api.orders import OrderPage
from jupcron.domain import RunStatus
from jupcron.emulator.ledger import RecurringOrder
from jupcron.follower import OrderFollower
from jupcron.store import follow
from jupcron.store.engine import begin
from tests.fixtures.follow import DAY, SOL, FollowRig, FollowRigFactory, recurring_request
from tests.fixtures.runner import USDC, outcome_of

HOUR = 3600


class Counting:
    """The real client, with the pages it asked for counted by (source, list)."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.pages: Counter[tuple[str, str]] = Counter()

    def recurring_orders(self, user: str, status: str, page: int) -> OrderPage:
        self.pages["recurring", status] += 1
        answer: OrderPage = self.api.recurring_orders(user, status, page)
        return answer

    def trigger_orders(self, user: str, status: str, page: int) -> OrderPage:
        self.pages["trigger", status] += 1
        answer: OrderPage = self.api.trigger_orders(user, status, page)
        return answer


def _lost_create(f: FollowRig) -> int:
    """A recurring run in doubt whose transaction never landed: followed by a
    signature no listing will ever show. Its run id."""
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    run_id = f.fire(plan)
    never = str(Signature.new_unique())
    with f.engine.begin() as conn:
        conn.execute(text("UPDATE runs SET status = 'in_doubt', order_account = NULL, "
                          "signature = :s WHERE id = :r"), {"s": never, "r": run_id})  # fmt: skip
    return run_id


def _history_of_strangers(f: FollowRig, count: int) -> None:
    """`count` closed orders of the wallet that no run of ours made (another app's)."""
    start = f.clock.wall() - 30 * DAY
    for n in range(count):
        key = str(Signature.new_unique())[:44]
        f.rig.emulator.ledger.recurring_orders[key] = RecurringOrder(
            order=key, user=f.rig.wallet.address, input_mint=USDC, output_mint=SOL,
            in_amount=100_000_000, number_of_orders=2, interval=DAY, created_at=start + n,
            signature=str(Signature.new_unique()), status="completed", updated_at=start + n,
        )  # fmt: skip


def _events(f: FollowRig, step: str) -> list[dict[str, Any]]:
    with begin(f.engine) as conn:
        return follow.events(conn, step)


def test_an_order_of_ours_in_neither_list_is_told_once_after_a_grace(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    run_id = _lost_create(f)
    follower = f.follower()
    follower.poll()  # just made: the listings may not show it yet
    assert _events(f, "order_unaccounted") == []
    f.clock.advance(2 * HOUR)
    with capture_logs() as logs:
        follower.poll()
    (event,) = _events(f, "order_unaccounted")
    assert (event["source"], event["run_id"]) == ("recurring", run_id)
    warned = [e for e in logs if e["event"] == "order_unaccounted"]
    assert [e["log_level"] for e in warned] == ["warning"]
    for _ in range(3):  # told once, not per poll (nor per sweep of the history)
        f.clock.advance(2 * HOUR)
        with capture_logs() as logs:
            follower.poll()
        assert [e for e in logs if e["event"] == "order_unaccounted"] == []
    assert len(_events(f, "order_unaccounted")) == 1


def test_a_lost_order_does_not_cost_a_read_of_the_whole_history_at_every_poll(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    _history_of_strangers(f, 35)  # 4 pages of history
    _lost_create(f)
    api = Counting(f.client())
    follower = OrderFollower(f.engine, api, f.rig.wallet.address, f.clock)
    f.clock.advance(2 * HOUR)
    follower.poll()  # one whole read of the history: the order is nowhere
    assert api.pages["recurring", "history"] == 4
    polls = 6
    for _ in range(polls):  # the daemon's 5-minute polls of the next half hour
        f.clock.advance(300)
        follower.poll()
    print(f"\n{polls} polls with one lost order: {dict(api.pages)} pages")
    assert api.pages["recurring", "active"] == 1 + polls  # the active list: every poll
    assert api.pages["recurring", "history"] == 4  # the history: not again yet
    f.clock.advance(2 * HOUR)
    follower.poll()  # but it is looked for again, later
    assert api.pages["recurring", "history"] == 8
    assert len(_events(f, "order_unaccounted")) == 1


def test_an_order_that_vanished_and_turned_up_closed_is_still_recorded(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    order = f.rig.run(f.fire(plan)).order_account
    assert order is not None
    follower = f.follower()
    follower.poll()  # seen in the active list: open
    ledger = f.rig.emulator.ledger
    held = ledger.recurring_orders.pop(order)  # the listings lose it for a while
    f.clock.advance(3 * HOUR)
    follower.poll()
    (event,) = _events(f, "order_unaccounted")
    assert event["order_account"] == order
    ledger.recurring_orders[order] = held  # back; its keeper fills both rounds
    f.clock.advance(2 * DAY)
    follower.poll()
    assert len(f.fills("dca")) == 2 == len(f.ledger_fills(order))
    with begin(f.engine) as conn:
        assert order in follow.closed_orders(conn, "recurring")
    assert len(_events(f, "order_completed")) == 1
    assert len(_events(f, "order_unaccounted")) == 1


def test_a_recurring_order_still_active_well_past_its_end_is_told_once(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    plan = f.rig.plan("recurring", recurring_request(2), name="dca")
    run_id = f.fire(plan)
    order = f.rig.run(run_id).order_account
    follower = f.follower()
    follower.poll()
    f.rig.emulator.state.keeper_offset = -30 * DAY  # Jupiter's keepers stop filling it
    f.clock.advance(2 * DAY - HOUR)  # within its 2 x 1 day: nothing to say
    follower.poll()
    assert _events(f, "order_overdue") == []
    f.clock.advance(HOUR + 10)  # its end, give or take a keeper's lag
    follower.poll()
    assert _events(f, "order_overdue") == []
    f.clock.advance(2 * HOUR)
    with capture_logs() as logs:
        follower.poll()
    (event,) = _events(f, "order_overdue")
    assert (event["order_account"], event["run_id"], event["source"]) == (
        order, run_id, "recurring")  # fmt: skip
    assert [e["log_level"] for e in logs if e["event"] == "order_overdue"] == ["warning"]
    f.clock.advance(DAY)
    follower.poll()
    assert len(_events(f, "order_overdue")) == 1


def test_a_trigger_order_still_active_well_past_its_expiry_is_told_once(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    emulator = f.rig.emulator
    body = {"maker": f.rig.wallet.address, "makingAmount": 5_000_000, "takingAmount": 40_000_000,
            "inputMint": USDC, "outputMint": SOL, "expiredAt": int(f.clock.wall()) + HOUR}  # fmt: skip
    made = emulator.handle("POST", "/_emulator/trigger-orders", {}, {}, json.dumps(body).encode())
    order = str(made.json()["order"])
    emulator.state.keeper_offset = -30 * DAY  # nobody closes it when it expires
    fault = {"kind": "failed", "code": 400, "error": "injected", "operation": "execute_trigger"}
    assert emulator.handle("POST", "/_emulator/faults", {}, {},
                           json.dumps(fault).encode()).status == 200  # fmt: skip
    plan = f.rig.plan("trigger-cancel", {"order": order, "computeUnitPrice": "auto"}, name="c")
    outcome = outcome_of(f.rig.runner().fire(plan, f.clock.now.replace(microsecond=0)))
    assert outcome.status is RunStatus.FAILED  # the order stays open, and ours to follow
    follower = f.follower()
    f.clock.advance(HOUR + 600)  # expired, but a keeper may be a little late
    follower.poll()
    assert _events(f, "order_overdue") == []
    f.clock.advance(HOUR)
    follower.poll()
    f.clock.advance(HOUR)
    follower.poll()
    (event,) = _events(f, "order_overdue")
    assert (event["order_account"], event["run_id"]) == (order, outcome.run_id)
    assert event["detail"]["remaining"] == "5000000"  # what sits in the order
