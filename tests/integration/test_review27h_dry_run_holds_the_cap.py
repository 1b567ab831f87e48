"""A dry run spends nothing, yet while it was in flight (its order call and txguard's
look, seconds; a crashed one until recovery ended it) its pre-flight wrote its amount
on its row as a cap reservation, and every cap check counted it: a real run of another
plan due at the same instant (two hourly plans at :00, one of them a plan with
`dry_run: true` being tried out) was `skipped`, "cap would be exceeded", for money that
never moves. Held now: a run claimed as a dry run is checked against the caps (the
operator sees what a real run would meet) through the run store's read-only
`cap_hit`, and reserves nothing (`jupcron.runner.preflight.check`); its row carries no
amount until it ends (tests/integration/test_review27o_dry_run_requested_holds_the_cap.py).

Real SQLite file, the emulator (in process), the real runner and store; the real run is
fired from the dry run's order attempt (after its pre-flight, before it ends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from tests.fixtures.runner import USDC, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)


def test_a_dry_run_in_flight_does_not_hold_back_a_real_run_under_the_cap(
    make_rig: RigFactory,
) -> None:
    # room for one 5 USDC run, not two
    rig = make_rig(safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})
    trial = rig.plan("swap", name="trial", settings={"dry_run": True})
    real = rig.plan("swap", name="real")
    beside: list[RunOutcome] = []

    def real_fires(attempt: Any) -> None:
        if attempt.operation == "ultra_order" and not beside:  # the dry run is ordering
            beside.append(outcome_of(rig.runner().fire(real, SLOT)))

    dry = outcome_of(rig.runner(on_attempt=real_fires).fire(trial, SLOT))
    assert dry.status is RunStatus.DRY_RUN
    assert len(beside) == 1
    assert beside[0].status is RunStatus.SUCCEEDED, beside[0].error
