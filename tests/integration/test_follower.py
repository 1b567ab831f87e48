"""The order follower against the emulator's keeper, on SQLite and PostgreSQL:
fills stored once, linked to their run, totals equal to the emulator's ledger;
restarts, a second follower and bad answers lose and double nothing."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text
from structlog.testing import capture_logs

from jupcron.follower import FollowerLoop, OrderFollower
from jupcron.store import follow
from jupcron.store.engine import make_engine
from tests.fixtures.follow import (
    DAY,
    FollowRig,
    FollowRigFactory,
    listing_edited,
    poll_with,
    recurring_request,
)
from tests.support.wait import wait_until

ROUNDS = 5


def recurring_order(f: FollowRig, rounds: int = ROUNDS) -> tuple[str, int, str]:
    plan = f.rig.plan("recurring", recurring_request(rounds), name="dca")
    run_id = f.fire(plan)
    order = f.rig.run(run_id).order_account
    assert order is not None
    return plan.name, run_id, order


def test_a_recurring_order_filled_over_n_rounds_gives_n_fills_and_the_ledger_totals(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    name, run_id, order = recurring_order(f)
    follower = f.follower()
    for _ in range(ROUNDS):
        follower.poll()
        f.clock.advance(DAY)
    follower.poll()  # the order is complete: it is found in the history and closed
    ledger = f.ledger_fills(order)
    assert len(ledger) == ROUNDS
    fills = f.fills(name)
    assert len(fills) == ROUNDS
    assert {r["source"] for r in fills} == {"recurring"}
    assert {r["run_id"] for r in fills} == {run_id}
    assert {r["order_account"] for r in fills} == {order}
    assert sorted(r["signature"] for r in fills) == sorted(x["txId"] for x in ledger)
    report = f.report(name)
    assert (
        report.spent
        == sum(x["in"] for x in ledger)
        == int(recurring_request(ROUNDS)["params"]["time"]["inAmount"])
    )
    assert report.received == sum(x["out"] for x in ledger)
    assert len(report.fills) == ROUNDS
    # the price moved from round to round
    assert len({x["out"] for x in ledger}) > 1
    with f.engine.connect() as conn:
        assert follow.closed_orders(conn, "recurring") >= {order}
        closed = follow.events(conn, "order_completed")
    assert [e["order_account"] for e in closed] == [order]
    audit = f.sql("SELECT spent, received, fills, refunded FROM audit WHERE run_id = :r", r=run_id)[
        0
    ]
    assert int(audit["spent"]) == report.spent
    assert int(audit["received"]) == report.received
    assert audit["fills"] == ROUNDS
    # nothing of ours is open any more: the next poll asks nothing
    before = sum(
        f.rig.emulator.ledger.requests.get(op, 0) for op in ("recurring_orders", "trigger_orders")
    )
    results = follower.poll()
    assert [r.requests for r in results] == [0, 0]
    after = sum(
        f.rig.emulator.ledger.requests.get(op, 0) for op in ("recurring_orders", "trigger_orders")
    )
    assert after == before


def test_a_restarted_follower_and_a_second_one_add_no_duplicate(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    name, _, order = recurring_order(f)
    f.follower().poll()
    f.clock.advance(2 * DAY)
    f.follower().poll()  # a new follower (a restart) reads the same trades again
    assert len(f.fills(name)) == 3
    # a second daemon: its own engine and follower, polling at the same time as ours
    other = make_engine(db_url)
    try:
        f.clock.advance(DAY)
        second = OrderFollower(other, f.client(), f.rig.wallet.address, f.clock)
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def poll(target: OrderFollower) -> None:
            barrier.wait()
            try:
                target.poll()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=poll, args=(x,)) for x in (f.follower(), second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == []
    finally:
        other.dispose()
    fills = f.fills(name)
    assert len(fills) == 4 == len(f.ledger_fills(order))
    assert len({r["signature"] for r in fills}) == 4


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "malformed", "operation": "recurring_orders"},
        {"kind": "wrong_types", "operation": "recurring_orders"},
        {"kind": "server_error", "operation": "recurring_orders"},
        {"kind": "drop_field", "operation": "recurring_orders", "field": "txId"},
        {"kind": "drop_field", "operation": "recurring_orders", "field": "rawOutputAmount"},
        {"kind": "drop_field", "operation": "recurring_orders", "field": "totalPages"},
        {"kind": "bad_page", "operation": "recurring_orders"},
    ],
    ids=lambda f: f"{f['kind']}-{f.get('field', '')}",
)
def test_a_bad_answer_is_an_error_event_and_nothing_is_lost(
    make_follow_rig: FollowRigFactory, db_url: str, fault: dict[str, object]
) -> None:
    f = make_follow_rig(db_url)
    name, _, order = recurring_order(f, rounds=3)
    f.clock.advance(3 * DAY)  # every round is due: the order is complete, in the history
    f.rig.emulator.faults.extend([{**fault, "count": 0}])  # every such answer, until cleared
    results = f.follower().poll()
    assert results[0].errors >= 1  # an error, not an exception
    with f.engine.connect() as conn:
        problems = [e for e in follow.events(conn) if e["step"].startswith("follow_")]
        closed = follow.closed_orders(conn, "recurring")
    assert problems, "the bad answer is recorded"
    assert order not in closed  # never closed from an answer that could not be read whole
    f.rig.emulator.faults.clear()
    f.follower().poll()  # the next poll reads it all
    fills = f.fills(name)
    assert len(fills) == 3 == len(f.ledger_fills(order))
    assert f.report(name).received == sum(x["out"] for x in f.ledger_fills(order))
    with f.engine.connect() as conn:
        assert order in follow.closed_orders(conn, "recurring")


@pytest.mark.parametrize("expired_at", [1e20, "Infinity"])
def test_an_order_with_an_expiry_out_of_range_is_an_error_not_an_exception(
    make_follow_rig: FollowRigFactory, db_url: str, expired_at: object
) -> None:
    """Before: OverflowError from one order's ``expiredAt`` escaped `OrderFollower.poll`
    (whose contract: it never raises for the API's troubles)."""
    f = make_follow_rig(db_url)
    recurring_order(f, rounds=2)
    f.clock.advance(DAY)
    api = listing_edited(
        f, lambda o: {**o, "expiredAt": 0},
        text=lambda body: body.replace('"expiredAt": 0', f'"expiredAt": {expired_at}'),
    )  # fmt: skip
    results = poll_with(f, api)
    assert results[0].errors >= 1
    with f.engine.connect() as conn:
        steps = [e for e in follow.events(conn) if e["step"].startswith("follow_")]
    assert any("expiredAt" in str(e) and "out of range" in str(e) for e in steps), steps


def test_foreign_orders_are_ignored(make_follow_rig: FollowRigFactory, db_url: str) -> None:
    f = make_follow_rig(db_url)
    name, _, order = recurring_order(f, rounds=2)
    # an order of the same wallet that no run of ours created (made in another app)
    other = f.rig.plan("recurring", recurring_request(2), name="not-followed")
    foreign_run = f.fire(other)
    foreign = f.rig.run(foreign_run).order_account
    with f.engine.begin() as conn:  # forget that a run of ours made it: now it is foreign
        forget = "UPDATE runs SET status = 'failed', order_account = NULL, signature = NULL WHERE id = :r"
        conn.execute(text(forget), {"r": foreign_run})
    f.clock.advance(2 * DAY)
    results = f.follower().poll()
    assert results[0].foreign >= 1
    assert {r["order_account"] for r in f.fills()} == {order}
    assert len(f.fills(name)) == 2
    assert f.fills("not-followed") == []
    assert foreign is not None


def test_an_order_whose_account_the_run_never_learned_is_found_by_its_open_tx(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    name, run_id, order = recurring_order(f, rounds=2)
    with f.engine.begin() as conn:  # as if the execute answer was lost and the run settled
        conn.execute(
            text("UPDATE runs SET status = 'in_doubt', order_account = NULL WHERE id = :r"),
            {"r": run_id},
        )
    f.clock.advance(DAY)
    f.follower().poll()
    fills = f.fills(name)
    assert len(fills) == 2
    assert {(r["run_id"], r["order_account"]) for r in fills} == {(run_id, order)}
    with f.engine.connect() as conn:
        assert order in follow.closed_orders(conn, "recurring")


def test_the_follower_thread_polls_at_start_and_again_until_stopped(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """`FollowerLoop` (the leader's follower, on the periodic thread): a poll at once,
    more after each interval, the fills stored once; a stop ends the thread."""
    f = make_follow_rig(db_url)
    name, _, _ = recurring_order(f, rounds=2)
    f.clock.advance(2 * DAY)
    loop = FollowerLoop(f.engine, f.client(), f.rig.wallet.address, interval=0.0, clock=f.clock)
    with capture_logs() as logs:
        loop.start()
        assert wait_until(lambda: loop.polls >= 3, 60)
        loop.stop(timeout=30)
    assert not any(t.name == "follower" for t in threading.enumerate())
    assert [e["event"] for e in logs].count("follower_started") == 1
    assert "follower_failed" not in [e["event"] for e in logs]
    assert len(f.fills(name)) == 2  # polled three times or more: stored once
