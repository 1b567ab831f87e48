"""Crash recovery in-process: the run "dies" at every step boundary (a failpoint
raising SimulatedCrash, so nothing after it runs), and a fresh runner settles it.
The subprocess SIGKILL version of these is in tests/e2e/test_crash.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.ports import RunOptions
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Clock, RigFactory

# a slot ahead of the wall clock (the runner's own clock is the real one here), so
# its grace period cannot pass while the suite runs, whatever the day or hour
SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


@pytest.fixture(autouse=True)
def _disarm() -> Iterator[None]:
    yield
    failpoints.disarm()


def crash(rig_runner_fire: object) -> None:
    with pytest.raises(failpoints.SimulatedCrash):
        rig_runner_fire()  # type: ignore[operator]


@pytest.mark.parametrize("point", failpoints.NAMES)
@pytest.mark.parametrize("kind", ["swap", "recurring"])
def test_a_crash_at_any_step_ends_in_exactly_one_order(
    make_rig: RigFactory, point: str, kind: str
) -> None:
    rig = make_rig()
    plan = rig.plan(kind)
    failpoints.arm(point)
    crash(lambda: rig.runner().fire(plan, SLOT))
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    landed = rig.landed()
    assert len(landed) == 1
    run = rig.run(outcomes[0].run_id)
    assert run.signature == landed[0].signature
    # nothing more to do: a second recovery pass touches nothing
    assert recover(rig.runner(), startup=True) == []
    assert len(rig.landed()) == 1


def test_signed_then_crash_reposts_the_same_signature(make_rig: RigFactory) -> None:
    rig = make_rig()
    plan = rig.plan("swap")
    failpoints.arm("after_sign")
    crash(lambda: rig.runner().fire(plan, SLOT))
    (run_id,) = [r.id for r in _in_flight(rig)]
    signed_before = rig.run(run_id).signature
    recover(rig.runner(), startup=True)
    assert rig.run(run_id).signature == signed_before
    assert rig.landed()[0].signature == signed_before


@pytest.mark.parametrize("kind", ["swap", "recurring"])
def test_landed_but_unanswered_long_ago_is_settled_by_the_rpc(
    make_rig: RigFactory, kind: str
) -> None:
    clock = Clock()
    rig = make_rig(clock=clock)
    plan = rig.plan(kind)
    failpoints.arm("after_execute")
    crash(lambda: rig.runner().fire(plan, SLOT))
    clock.advance(600)  # the requestId and the blockhash are long gone
    outcomes = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert "settled_by_rpc" in rig.steps(outcomes[0].run_id)
    assert len(rig.landed()) == 1


def test_landed_but_unanswered_without_an_rpc_is_in_doubt_not_retried(make_rig: RigFactory) -> None:
    clock = Clock()
    rig = make_rig(clock=clock)
    failpoints.arm("after_execute")
    crash(lambda: rig.runner().fire(rig.plan("swap"), SLOT))
    clock.advance(600)
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.IN_DOUBT]
    assert rig.issued() == 1  # never a fresh order for a slot that may have landed
    assert len(rig.landed()) == 1
    # in_doubt is left alone by later passes
    assert recover(rig.runner(), startup=True) == []


def test_signed_never_posted_and_expired_past_grace_is_settled_as_not_landed_by_the_rpc(
    make_rig: RigFactory,
) -> None:
    clock = Clock(SLOT)
    rig = make_rig(clock=clock)
    failpoints.arm("after_sign")
    crash(lambda: rig.runner().fire(rig.plan("swap", schedule={"every": "1h", "grace": 300}), SLOT))
    clock.advance(600)
    outcomes = recover(rig.runner(rpc=rig.rpc()), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.FAILED]
    assert outcomes[0].error is not None
    assert "never landed" in outcomes[0].error
    assert rig.landed() == []
    assert rig.issued() == 1


def test_signed_never_posted_and_expired_within_grace_is_ordered_afresh(
    make_rig: RigFactory,
) -> None:
    """SIGNED is stored before the post and SUBMITTED before it happens: a run found
    in SIGNED was never posted, so the expired bytes cannot land and a fresh order is safe."""
    clock = Clock(SLOT)
    rig = make_rig(clock=clock)
    failpoints.arm("after_sign")
    crash(lambda: rig.runner().fire(rig.plan("swap", schedule={"every": "1h", "grace": 900}), SLOT))
    clock.advance(200)
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SUCCEEDED]
    assert rig.issued() == 2
    assert len(rig.landed()) == 1


def test_unsigned_run_past_its_grace_is_skipped_not_ordered(make_rig: RigFactory) -> None:
    clock = Clock(SLOT)
    rig = make_rig(clock=clock)
    plan = rig.plan("swap", schedule={"every": "1h", "grace": 60})
    failpoints.arm("after_requested")
    crash(lambda: rig.runner().fire(plan, SLOT))
    clock.advance(3600)
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SKIPPED]
    assert rig.landed() == []


def test_recovery_leaves_fresh_runs_of_other_processes_alone(make_rig: RigFactory) -> None:
    rig = make_rig()
    failpoints.arm("after_requested")
    crash(lambda: rig.runner().fire(rig.plan("swap"), SLOT))
    # not at start-up: a run touched seconds ago may belong to a live `jupcron fire`
    assert recover(rig.runner(), startup=False, stale_after=60) == []
    assert recover(rig.runner(), startup=False, stale_after=0)[0].status is RunStatus.SUCCEEDED


def _in_flight(rig):  # type: ignore[no-untyped-def]
    from jupcron.store import runs

    with rig.factory() as session:
        return runs.in_flight(session)


def test_two_runners_racing_for_one_slot_make_one_order(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(db_url=db_url)
    plan = rig.plan("recurring")
    barrier = threading.Barrier(4)
    results = []

    def fire() -> None:
        runner = rig.runner()
        barrier.wait()
        results.append(runner.fire(plan, SLOT))

    threads = [threading.Thread(target=fire) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for r in results if r is not None]
    assert len(done) == 1
    assert done[0].status is RunStatus.SUCCEEDED
    assert rig.issued() == 1
    assert len(rig.landed()) == 1


def test_recovery_of_a_disabled_plan_before_signing_skips(make_rig: RigFactory) -> None:
    from jupcron.store.engine import transaction
    from jupcron.store.models import Plan

    rig = make_rig()
    plan = rig.plan("swap")
    failpoints.arm("after_claim")
    crash(lambda: rig.runner().fire(plan, SLOT))
    with transaction(rig.factory) as session:
        row = session.get(Plan, plan.id)
        assert row is not None
        row.enabled = False
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SKIPPED]
    assert rig.issued() == 0
    _ = timedelta


@pytest.mark.parametrize("point", ["after_claim", "after_order", "after_requested"])
def test_an_interrupted_fire_dry_run_stays_a_dry_run(make_rig: RigFactory, point: str) -> None:
    # `jupcron fire NAME --dry-run` killed before its end: recovery (the daemon's, or
    # the next `fire`'s) finishes it as what it was claimed as, and signs nothing
    rig = make_rig()
    plan = rig.plan("swap")
    failpoints.arm(point)
    crash(lambda: rig.runner().fire(plan, SLOT, RunOptions(dry_run=True, trigger="manual")))
    failpoints.disarm()
    outcomes = recover(rig.runner(), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.DRY_RUN]
    assert rig.landed() == []
    run = rig.run(outcomes[0].run_id)
    assert run.signature is None
    assert run.signed_tx is None
    finished = [detail for _, step, detail in rig.events(run.id) if step == "dry_run"]
    assert finished[0]["source"] == "fire --dry-run (as claimed)"


def test_a_run_claimed_under_safety_dry_run_is_not_signed_after_it_is_turned_off(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(safety={"dry_run": True})
    plan = rig.plan("swap")
    failpoints.arm("after_order")
    crash(lambda: rig.runner().fire(plan, SLOT))
    failpoints.disarm()
    live = rig.config.model_copy(
        update={"safety": rig.config.safety.model_copy(update={"dry_run": False})}
    )
    outcomes = recover(rig.runner(config=live), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.DRY_RUN]
    assert rig.landed() == []
    finished = [d for _, step, d in rig.events(outcomes[0].run_id) if step == "dry_run"]
    assert finished[0]["source"] == "safety.dry_run (as claimed)"
    # the next slot, claimed under the live config, signs
    outcome = rig.runner(config=live).fire(plan, SLOT + timedelta(hours=1))
    assert outcome is not None
    assert outcome.status is RunStatus.SUCCEEDED


@pytest.mark.parametrize(("late", "ends"), [(60, RunStatus.SUCCEEDED), (3600, RunStatus.SKIPPED)])
def test_a_fire_that_died_before_signing_is_ordered_only_inside_its_grace(
    make_rig: RigFactory, late: int, ends: RunStatus
) -> None:
    """`jupcron fire` killed before it signed: a recovery inside the plan's grace (from
    when it was fired) carries it on; one an hour later records it skipped, and orders
    nothing at whatever the price is by then (it used to, however late)."""
    clock = Clock()
    rig = make_rig(clock=clock)
    plan = rig.plan("swap")  # grace: the default 300 s
    failpoints.arm("after_requested")
    crash(lambda: rig.runner().fire(plan, clock.now, RunOptions(trigger="manual")))
    failpoints.disarm()
    clock.advance(late)
    (outcome,) = recover(rig.runner(), startup=True)
    assert outcome.status is ends
    assert len(rig.landed()) == (1 if ends is RunStatus.SUCCEEDED else 0)
    if ends is RunStatus.SKIPPED:
        assert outcome.error == "interrupted before signing, and the fire's grace period has passed"
