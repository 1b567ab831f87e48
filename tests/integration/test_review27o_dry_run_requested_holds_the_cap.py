"""A dry run's row carries its amount from its ``requested`` step (and, with no cap on
its plan when claimed, from its claim), and every cap check counts such a row: a dry
run that crashed after its order (a killed `fire --dry-run`, a daemon killed mid-run)
keeps a real run of another plan `skipped`, "cap would be exceeded", until recovery
ends it, for money that never moves (tests/integration/test_review27h_dry_run_holds_the_cap.py
holds the pre-flight's window). Held now: a run claimed as a dry run puts no amount on
its row until it ends.

Real SQLite file, the emulator (in process), the real runner and store; the crash is a
failpoint (`SimulatedCrash`), as tests/integration/test_recovery.py does it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from jupcron import failpoints
from jupcron.domain import RunStatus
from jupcron.runner.recovery import recover
from tests.fixtures.runner import USDC, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)


@pytest.fixture(autouse=True)
def _disarm() -> Iterator[None]:
    yield
    failpoints.disarm()


@pytest.mark.parametrize("point", ["after_order", "after_requested"])
def test_a_crashed_dry_run_does_not_hold_back_a_real_run_under_the_cap(
    make_rig: RigFactory, point: str
) -> None:
    # room for one 5 USDC run, not two
    rig = make_rig(safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})
    trial = rig.plan("swap", name="trial", settings={"dry_run": True})
    real = rig.plan("swap", name="real")
    failpoints.arm(point)
    with pytest.raises(failpoints.SimulatedCrash):
        rig.runner().fire(trial, SLOT)
    failpoints.disarm()
    beside = outcome_of(rig.runner().fire(real, SLOT))
    assert beside.status is RunStatus.SUCCEEDED, beside.error
    # recovery orders the dry run afresh: it meets the cap the real run now fills, as
    # a real run would (checked, not reserved), and nothing more lands
    (ended,) = recover(rig.runner(), startup=True)
    assert ended.status is RunStatus.SKIPPED
    assert "would be exceeded" in str(ended.error)
    assert len(rig.landed()) == 1


def test_a_dry_run_keeps_its_amount_on_its_row_when_it_ends(make_rig: RigFactory) -> None:
    rig = make_rig(safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})
    dry = outcome_of(rig.runner().fire(rig.plan("swap", settings={"dry_run": True}), SLOT))
    assert dry.status is RunStatus.DRY_RUN
    assert rig.run(dry.run_id).in_amount == "5000000"
