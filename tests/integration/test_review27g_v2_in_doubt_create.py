"""A Trigger V2 create left ``in_doubt`` (its answers lost, the history unreadable until
its blockhash expired) whose deposit did land: the follower finds its order by the
deposit's signature, the run's own, as v1's follows an in-doubt recurring create by
its open transaction.

Before: the V2 follower knew a create's order only by the run's ``order_account``,
which an unanswered create never got. The order (its whole budget in the vault)
went on filling with nothing recorded: no fills, no refund, no alert, and no
followed order for ``jupcron settle`` to show the run's transaction landed, so the
operator was free to record it ``--not-landed`` (no money spent) while the deposit
sat in the vault. On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from jupcron.api.client import SPARE_WAIT
from jupcron.domain import RunStatus
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from jupcron.runner.recovery import recover
from jupcron.store.follow import landed_evidence
from tests.fixtures.follow import FollowRigFactory
from tests.fixtures.runner import ONE_ATTEMPT, outcome_of
from tests.fixtures.trigger_v2 import DCA_REQUEST, v2_orders

DAY = 86_400
PAST_EXPIRY = 600  # seconds: well past the deposit's blockhash


def test_an_in_doubt_v2_create_whose_deposit_landed_is_followed_by_its_signature(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True, api=ONE_ATTEMPT)
    faults = f.rig.emulator.faults
    faults.add("lost_answer", count=10, operation="trigger_v2_create_dca")
    faults.add("server_error", count=50, operation="trigger_v2_history_dca", status=503)
    plan = f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="v2-dca")
    fired = outcome_of(f.rig.runner().fire(plan, f.clock.now.replace(microsecond=0)))
    f.clock.advance(PAST_EXPIRY)
    (settled,) = recover(f.rig.runner(), runs=[fired.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled
    run = f.rig.run(fired.run_id)
    assert run.order_account is None
    faults.clear()
    (order,) = v2_orders(f.rig)  # the deposit landed: the order trades
    assert order.events[0]["txSignature"] == run.signature

    f.clock.advance(DAY)  # rounds at 0 and 1 day are filled
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT).poll()
    assert [r["run_id"] for r in f.fills("v2-dca")] == [run.id, run.id]
    stored = f.sql("SELECT order_account, run_id, state, open_tx FROM followed_orders")
    assert stored == [{"order_account": order.id, "run_id": run.id, "state": "open",
                       "open_tx": run.signature}]  # fmt: skip
    with f.engine.connect() as conn:
        assert landed_evidence(conn, run.id) is not None


def test_an_in_doubt_v2_create_whose_deposit_never_landed_is_told_unaccounted_once(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    """Nothing in either list carries its signature: at the hourly sweep the run is told
    ``order_unaccounted`` once (its key a signature, no order account)."""
    f = make_follow_rig(db_url, loopback=True, api=ONE_ATTEMPT)
    faults = f.rig.emulator.faults
    faults.add("server_error", count=10, operation="trigger_v2_create_dca", status=503)
    faults.add("server_error", count=50, operation="trigger_v2_history_dca", status=503)
    plan = f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="v2-dca")
    fired = outcome_of(f.rig.runner().fire(plan, f.clock.now.replace(microsecond=0)))
    f.clock.advance(PAST_EXPIRY)
    (settled,) = recover(f.rig.runner(), runs=[fired.run_id])
    assert settled.status is RunStatus.IN_DOUBT, settled
    faults.clear()
    assert v2_orders(f.rig) == []
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    follower = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)
    for _ in range(3):
        f.clock.advance(2 * 3600)
        follower.poll()
    told = f.sql("SELECT run_id, order_account FROM follow_events WHERE step = 'order_unaccounted'")
    assert told == [{"run_id": fired.run_id, "order_account": None}]
    with f.engine.connect() as conn:
        assert landed_evidence(conn, fired.run_id) is None
