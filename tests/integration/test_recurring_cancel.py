"""Plan kind ``recurring-cancel`` (issue 30 item 4), on SQLite and PostgreSQL through
the emulator: the cancel closes the named recurring order, the rest of its input
comes back to the wallet, the follower sees it closed and the report shows the
refund; an order already closed is a skip; a transaction closing another order, or
refunding elsewhere, is refused by txguard."""

from __future__ import annotations

from datetime import timedelta

from jupcron.domain import RunStatus
from tests.fixtures.follow import DAY, SOL, FollowRig, FollowRigFactory, recurring_request
from tests.fixtures.runner import USDC, outcome_of

ROUNDS = 3
PER_ROUND = 60_000_000


def _open(f: FollowRig) -> tuple[str, str]:
    """A recurring order of ours, one round filled: (its plan's name, its account)."""
    plan = f.rig.plan("recurring", recurring_request(ROUNDS, PER_ROUND), name="dca")
    order = f.rig.run(f.fire(plan)).order_account
    assert order is not None
    follower = f.follower()
    follower.poll()
    f.clock.advance(DAY)
    follower.poll()  # the first round is filled
    return plan.name, order


def test_a_recurring_cancel_closes_the_order_and_its_refund_is_in_the_report(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    name, order = _open(f)
    held = f.rig.emulator.ledger.recurring_orders[order]
    left = held.in_amount - held.in_used
    assert 0 < left < held.in_amount  # partly used: a real refund
    before = f.rig.emulator.ledger.balance(f.rig.wallet.address, USDC)
    cancel = f.rig.plan("recurring-cancel", {"order": order}, name="stop-dca")
    run = f.rig.run(f.fire(cancel))
    assert (run.status, run.order_account) == (RunStatus.SUCCEEDED, order)
    assert held.status == "cancelled"
    assert f.rig.emulator.ledger.balance(f.rig.wallet.address, USDC) == before + left
    f.follower().poll()  # now in the history: cancelled, the rest withdrawn
    assert f.report(name).refunded == left  # the order's plan: its refund
    audit = f.sql("SELECT kind, status FROM audit WHERE run_id = :r", r=run.id)
    assert audit == [{"kind": "recurring-cancel", "status": "succeeded"}]


def test_a_recurring_cancel_of_an_order_already_closed_is_skipped(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    _, order = _open(f)
    cancel = f.rig.plan("recurring-cancel", {"order": order}, name="stop-dca")
    f.fire(cancel)
    again = outcome_of(f.rig.runner().fire(cancel, f.clock.now + timedelta(hours=1)))
    assert again.status is RunStatus.SKIPPED
    run = f.rig.run(again.run_id)
    assert (run.error_code, run.signed_tx) == ("order_gone", None)
    assert (run.error or "").startswith("nothing to cancel")


def test_a_hostile_cancel_transaction_is_refused_and_the_order_stays_open(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    _, order = _open(f)
    f.rig.emulator.faults.add("hostile", operation="cancel_recurring_order")
    cancel = f.rig.plan("recurring-cancel", {"order": order}, name="stop-dca")
    outcome = outcome_of(f.rig.runner().fire(cancel, f.clock.now.replace(microsecond=0)))
    assert outcome.status is RunStatus.REJECTED
    assert f.rig.run(outcome.run_id).signed_tx is None
    assert f.rig.emulator.ledger.recurring_orders[order].status == "active"


def test_a_pair_cancel_closes_our_open_orders_of_the_pair_oldest_first_then_skips(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    opening = f.rig.plan("recurring", recurring_request(ROUNDS, PER_ROUND), name="dca")
    first = f.rig.run(f.fire(opening)).order_account
    f.clock.advance(60)
    second = f.rig.run(f.fire(opening)).order_account
    assert first
    assert second
    assert first != second
    pair = {"inputMint": USDC, "outputMint": SOL}
    other = f.rig.plan("recurring-cancel", {"inputMint": SOL, "outputMint": USDC}, name="x")
    held = f.rig.emulator.ledger.recurring_orders
    cancel = f.rig.plan("recurring-cancel", pair, name="stop-pair")
    closed = []
    for hour in (1, 2):
        slot = f.clock.now.replace(microsecond=0) + timedelta(hours=hour)
        outcome = outcome_of(f.rig.runner().fire(cancel, slot))
        assert outcome.status is RunStatus.SUCCEEDED, outcome.error
        run = f.rig.run(outcome.run_id)
        closed.append(run.order_account)
    assert closed == [first, second]  # the oldest first
    assert {held[first].status, held[second].status} == {"cancelled"}
    last = outcome_of(f.rig.runner().fire(cancel, f.clock.now + timedelta(hours=3)))
    assert last.status is RunStatus.SKIPPED
    assert f.rig.run(last.run_id).error_code == "order_gone"
    none = outcome_of(f.rig.runner().fire(other, f.clock.now + timedelta(hours=4)))
    assert none.status is RunStatus.SKIPPED  # the other direction: none of ours
