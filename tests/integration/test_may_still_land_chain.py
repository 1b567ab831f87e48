"""A swap execute answered with a code after which the first transaction might still
land (-1000/-2000 "failed to land", -1001/-2001 "unknown error": `MAY_STILL_LAND`).
The runner waits for the blockhash to expire and may then order afresh, once, inside
the slot's grace. A fresh order when the first transaction DID land makes two swaps
for one slot: with an RPC node the chain is asked first (by the transaction's id),
and a transaction it holds settles the run. Without one, an "unknown error" (the
API's word says nothing of the fate) is never followed by a fresh order: it is
settled like a lost answer (the same bytes again, in_doubt once expired).

The emulator's ``timed_out`` fault lands the transaction and answers with the code
given. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from jupcron.runner.recovery import recover
from tests.fixtures.runner import Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PAST_EXPIRY = 600
SCHEDULE = {"every": "1h", "grace": 3600}  # room for the wait and a fresh order


def _rig(make_rig: RigFactory, db_url: str) -> tuple[Clock, Rig]:
    clock = Clock(SLOT)
    rig = make_rig(loopback=True, clock=clock, db_url=db_url,
                   emulator=Emulator(seed=7, clock=clock.wall))  # fmt: skip
    return clock, rig


def test_an_unknown_error_whose_transaction_landed_is_not_ordered_again(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = _rig(make_rig, db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra", code=-1001,
                            error="Unknown error")  # fmt: skip
    plan = rig.plan("swap", schedule=SCHEDULE)
    outcome = rig.fire_with_rpc(plan, SLOT, clock)  # its waits pass on the clock
    run = rig.run(outcome.run_id)
    steps = rig.steps(run.id)
    assert len(rig.landed()) == 1, steps  # one swap for one slot
    assert "reorder" not in steps, steps
    assert rig.issued() == 1
    assert run.status is RunStatus.SUCCEEDED, run.error
    assert run.signature == rig.landed()[0].signature
    assert steps[-1] == "settled_by_rpc"


def test_a_failed_to_land_answer_that_did_not_land_is_still_ordered_afresh_once(
    make_rig: RigFactory, db_url: str
) -> None:
    """The chain does not hold the first transaction after its blockhash expired: the
    fresh order the slot deserves is made, and lands once."""
    clock, rig = _rig(make_rig, db_url)
    rig.emulator.faults.add("failed", operation="execute_ultra", code=-1000,
                            error="Failed to land")  # fmt: skip
    plan = rig.plan("swap", schedule=SCHEDULE)
    outcome = rig.fire_with_rpc(plan, SLOT, clock)  # its waits pass on the clock
    steps = rig.steps(outcome.run_id)
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert steps.count("reorder") == 1, steps
    assert "wait_for_expiry" in steps, steps
    assert "rpc_status" in steps, steps
    assert rig.issued() == 2
    assert len(rig.landed()) == 1


def test_without_an_rpc_an_unknown_error_is_never_ordered_again(
    make_rig: RigFactory, db_url: str
) -> None:
    clock, rig = _rig(make_rig, db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra", code=-1001,
                            error="Unknown error")  # fmt: skip
    runner = rig.runner(sleep=clock.advance)
    outcome = outcome_of(runner.fire(rig.plan("swap", schedule=SCHEDULE), SLOT))
    assert outcome.status is RunStatus.SUBMITTED, outcome.error  # it may have landed
    assert rig.issued() == 1
    clock.advance(PAST_EXPIRY)
    (settled,) = recover(rig.runner(sleep=clock.advance), runs=[outcome.run_id])
    assert settled.status is RunStatus.IN_DOUBT  # reported for the operator, never re-ordered
    assert rig.issued() == 1
    assert len(rig.landed()) == 1


def test_an_unknown_error_out_of_grace_that_landed_is_not_recorded_failed(
    make_rig: RigFactory, db_url: str
) -> None:
    """No fresh order is possible (the grace is too short for the wait): the answer
    alone must not record a swap that landed as failed; the chain settles it."""
    clock, rig = _rig(make_rig, db_url)
    rig.emulator.faults.add("timed_out", operation="execute_ultra", code=-1001,
                            error="Unknown error")  # fmt: skip
    plan = rig.plan("swap", schedule={"every": "1h", "grace": 30})
    outcome = rig.fire_with_rpc(plan, SLOT, clock)
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert rig.issued() == 1
    assert len(rig.landed()) == 1
