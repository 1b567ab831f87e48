"""A plan edited, moved to another wallet or disabled while one of its runs is in
flight: the run is never ordered again under the plan's new terms (or for a plan
that no longer fires). Its signed bytes may still be posted (they were judged under
the terms the run was claimed with), but a fresh order, after those bytes expired
unposted or the API refused them, is for the terms the run was claimed under only:
when the plan changed since, the run is skipped and nothing more is ordered or signed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jupcron import failpoints
from jupcron.chain.wallet import Wallet
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from tests.fixtures.runner import SOL, USDC, Clock, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)

EDITS: dict[str, dict[str, Any]] = {
    "moved to another wallet": {"wallet": "savings", "version": 2},
    "amount changed": {
        "request": {"inputMint": USDC, "outputMint": SOL, "amount": 50_000_000},
        "version": 2,
    },
    "disabled": {"enabled": False, "version": 2},
}


@pytest.fixture(autouse=True)
def _disarm() -> Iterator[None]:
    yield
    failpoints.disarm()


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_signed_run_of_an_edited_plan_is_not_ordered_again_under_the_new_terms(
    make_rig: RigFactory, db_url: str, edit: str
) -> None:
    clock = Clock(SLOT)
    rig = make_rig(clock=clock, db_url=db_url)
    wallets = {"default": rig.wallet, "savings": Wallet.generate()}
    plan = rig.plan("swap", schedule={"every": "1h", "grace": 900})
    failpoints.arm("after_sign")
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner(wallets=wallets).fire(plan, SLOT)
    failpoints.disarm()
    with transaction(rig.factory) as session:  # `plans apply` of an edited file
        row = session.get(Plan, plan.id)
        assert row is not None
        for key, value in EDITS[edit].items():
            setattr(row, key, value)
    clock.advance(200)  # the signed bytes expired unposted, inside the slot's grace
    outcomes = recover(rig.runner(wallets=wallets), startup=True)
    assert [o.status for o in outcomes] == [RunStatus.SKIPPED]
    assert outcomes[0].error is not None
    assert "plan changed" in outcomes[0].error or "disabled" in outcomes[0].error
    assert rig.issued() == 1  # no order under the new terms
    assert rig.landed() == []
    assert "ordered" in rig.steps(outcomes[0].run_id)
    assert rig.steps(outcomes[0].run_id).count("ordered") == 1


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_fire_of_a_plan_changed_in_the_store_since_it_was_read_orders_nothing(
    make_rig: RigFactory, db_url: str, edit: str
) -> None:
    """The scheduler fires the plans it read (its window), and sees `plans apply`'s
    change only at its next poll: a slot that comes due in between is not ordered under
    the old version's terms, nor for a plan disabled or moved to another wallet."""
    rig = make_rig(db_url=db_url)
    wallets = {"default": rig.wallet, "savings": Wallet.generate()}
    runner = rig.runner(wallets=wallets)
    read = rig.plan("swap")  # as the scheduler read it
    with transaction(rig.factory) as session:  # then `plans apply` changed it
        row = session.get(Plan, read.id)
        assert row is not None
        for key, value in EDITS[edit].items():
            setattr(row, key, value)
    outcome = outcome_of(runner.fire(read, SLOT))
    assert rig.issued() == 0
    assert rig.landed() == []
    assert outcome.status is RunStatus.SKIPPED  # the slot has its row: it did not fire
    assert outcome.error is not None
    assert "the plan changed or was disabled" in outcome.error
    assert rig.steps(outcome.run_id) == ["claimed"]
