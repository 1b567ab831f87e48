"""A Swap V2 execute answered -1000/-2000 ("failed to land": the transaction may still
land until its blockhash expires). A fresh order for the slot may follow only once the
first transaction provably can no longer land: with an RPC node, once the chain's block
height is past the order's ``lastValidBlockHeight``; without one, after
``runner.blockhash_validity`` plus its third as a margin (`timing.surely_expired`),
as every other settlement path decides it. Before, the wait ended at the order time
plus the bare validity: at that moment the first order's height had not passed (the
emulator's block at exactly 90 s is its ``lastValidBlockHeight``, still a valid
block), and on a chain slower than the configured validity it was far from passed; a
first transaction landing then, beside the fresh one, makes two swaps for one slot."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jupcron.domain import RunStatus
from jupcron.emulator import Emulator
from tests.fixtures.runner import Clock, Rig, RigFactory, outcome_of

SLOT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
SCHEDULE = {"every": "1h", "grace": 3600}  # room for the wait and a fresh order
VALID_BLOCKS = 150


def _rig(make_rig: RigFactory, ttl: float) -> tuple[Clock, Rig]:
    clock = Clock(SLOT)
    emulator = Emulator(seed=7, clock=clock.wall, blockhash_ttl=ttl)
    rig = make_rig(loopback=True, clock=clock, emulator=emulator, swap_api="swap-v2")
    rig.emulator.faults.add("failed", operation="execute_swap", code=-1000,
                            error="Failed to land")  # fmt: skip
    return clock, rig


def _orders(rig: Rig) -> list[tuple[float, int]]:
    """Each issued order's time and ``lastValidBlockHeight``, oldest first."""
    issued = sorted(rig.emulator.ledger.issued.values(), key=lambda o: o.issued_at)
    return [(o.issued_at, int(o.extra["last_valid_block_height"])) for o in issued]


@pytest.mark.parametrize("ttl", [90.0, 120.0])  # the configured validity; a slower chain
def test_with_an_rpc_the_fresh_order_waits_for_the_height_to_pass(
    make_rig: RigFactory, ttl: float
) -> None:
    clock, rig = _rig(make_rig, ttl)
    plan = rig.plan("swap", schedule=SCHEDULE)
    outcome = rig.fire_with_rpc(plan, SLOT, clock)  # its waits pass on the clock
    steps = rig.steps(outcome.run_id)
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert steps.count("reorder") == 1, steps
    (_, first_limit), (_, second_limit) = _orders(rig)
    # the chain's height when the fresh order was made (its own limit less 150 blocks)
    height_then = second_limit - VALID_BLOCKS
    assert height_then > first_limit, (height_then, first_limit, steps)
    assert len(rig.landed()) == 1


def test_without_an_rpc_the_fresh_order_waits_for_the_margin(make_rig: RigFactory) -> None:
    clock, rig = _rig(make_rig, 90.0)
    runner = rig.runner(sleep=clock.advance)
    outcome = outcome_of(runner.fire(rig.plan("swap", schedule=SCHEDULE), SLOT))
    steps = rig.steps(outcome.run_id)
    assert outcome.status is RunStatus.SUCCEEDED, outcome.error
    assert steps.count("reorder") == 1, steps
    (first_at, first_limit), (second_at, second_limit) = _orders(rig)
    validity = rig.config.runner.blockhash_validity
    assert second_at - first_at >= validity * 4 / 3, (second_at - first_at, steps)
    assert second_limit - VALID_BLOCKS > first_limit
    assert len(rig.landed()) == 1


def test_no_fresh_order_when_the_grace_ends_before_the_margin(make_rig: RigFactory) -> None:
    """The grace ends after the bare validity but before its margin: no fresh order
    (the first transaction may still land until then)."""
    clock, rig = _rig(make_rig, 90.0)
    runner = rig.runner(sleep=clock.advance)
    plan = rig.plan("swap", schedule={"every": "1h", "grace": 100})
    outcome = outcome_of(runner.fire(plan, SLOT))
    steps = rig.steps(outcome.run_id)
    assert "reorder" not in steps, steps
    assert len(rig.emulator.ledger.issued) == 1
    assert rig.landed() == []
