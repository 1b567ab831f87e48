"""Which runs a cap's window holds: `per_day` and `per_week` are rolling (the 24 hours
and 7 days before the run's check, by the runner's clock), not calendar days; a run
dry, skipped, rejected or failed before it was signed spends nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.domain import RunStatus
from jupcron.runner.core import RunOptions
from tests.fixtures.runner import USDC, Clock, RigFactory, outcome_of

START = datetime(2026, 11, 28, 23, 30, tzinfo=UTC)  # half an hour before UTC midnight


def test_per_day_is_the_rolling_24_hours_and_per_week_the_rolling_7_days(
    make_rig: RigFactory, db_url: str
) -> None:
    clock = Clock(START)
    caps = [{"mint": USDC, "per_day": 5_000_000, "per_week": 10_000_000}]
    rig = make_rig(db_url=db_url, clock=clock, safety={"caps": caps})
    runner = rig.runner()

    def fire() -> RunStatus:
        return outcome_of(runner.fire(rig.plan("swap"), clock.now)).status

    assert fire() is RunStatus.SUCCEEDED
    clock.advance(3600)  # past UTC midnight: a new calendar day, the same 24 hours
    assert fire() is RunStatus.SKIPPED
    clock.advance(23 * 3600 - 2)  # 1 s short of 24 hours since the first
    assert fire() is RunStatus.SKIPPED
    clock.advance(3)  # 24 hours and a second since the first
    assert fire() is RunStatus.SUCCEEDED
    clock.advance(86_400 + 1)  # per_day free again; per_week holds two runs: full
    last = outcome_of(runner.fire(rig.plan("swap"), clock.now))
    assert last.status is RunStatus.SKIPPED
    assert last.error is not None
    assert "per_week=10000000" in last.error
    assert len(rig.landed()) == 2


def test_a_dry_run_spends_none_of_a_cap(make_rig: RigFactory, db_url: str) -> None:
    rig = make_rig(db_url=db_url, safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})
    runner = rig.runner()
    slot = datetime.now(UTC) + timedelta(days=1)
    dry = outcome_of(runner.fire(rig.plan("swap"), slot, RunOptions(dry_run=True)))
    assert dry.status is RunStatus.DRY_RUN
    real = outcome_of(runner.fire(rig.plan("swap"), slot))
    assert real.status is RunStatus.SUCCEEDED
    assert len(rig.landed()) == 1


def test_a_run_ordered_long_after_its_claim_counts_when_it_spends(
    make_rig: RigFactory, db_url: str
) -> None:
    """A run of a plan with a long grace whose process died between its claim and its
    order is ordered by the daemon's recovery a day later, inside that grace: its 5
    USDC leave the wallet now, so the next run within 24 hours finds the cap used."""
    from jupcron.runner.recovery import recover

    clock = Clock(START)
    rig = make_rig(db_url=db_url, clock=clock,
                   safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})  # fmt: skip
    runner = rig.runner()
    plan = rig.plan("swap", schedule={"every": "1h", "grace": "2d"})
    interrupted = runner.ports.store.claim(
        plan, clock.now, now=clock.now, trigger="schedule", claimed_by="node"
    )  # the claim, then the process died: nothing ordered
    assert interrupted is not None
    clock.advance(25 * 3600)
    recovered = recover(runner, startup=True)
    assert [o.status for o in recovered] == [RunStatus.SUCCEEDED]
    clock.advance(60)
    later = outcome_of(runner.fire(plan, clock.now))
    assert later.status is RunStatus.SKIPPED
    assert later.error is not None
    assert "per_day=7000000" in later.error
    assert len(rig.landed()) == 1
