"""One run whose recovery raises an unexpected error must not stall the others
(review 27k).

`recover` drives the runs left in flight one after the other, in the same order on
every pass. Before, an unexpected error in one run's drive (a bug, a malformed row,
an answer nothing expected) ended the whole pass: the same run came first again on
the next pass, and every run after it was never recovered. Each run's recovery is
now isolated: logged with its run id, and the others still recovered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import structlog

from jupcron.domain import RunStatus
from jupcron.errors import FatalError
from jupcron.runner.core import Runner
from jupcron.runner.outcome import RunOutcome
from jupcron.runner.ports import Ports, RunOptions
from jupcron.runner.recovery import recover
from jupcron.store.records import PlanRecord, RunRecord
from tests.fixtures.runner import Rig, RigFactory
from tests.fixtures.runs import record_run

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


class Breaks:
    """A runner whose drive of one run raises what nothing expected (a bug in a
    product's steps, say); every other run is driven for real."""

    def __init__(self, runner: Runner, broken: int, error: Exception) -> None:
        self.runner, self.broken, self.error = runner, broken, error

    @property
    def ports(self) -> Ports:
        return self.runner.ports

    @property
    def node(self) -> str:
        return self.runner.node

    def is_active(self, run_id: int) -> bool:
        return self.runner.is_active(run_id)

    def settles_as(self, run: RunRecord) -> str:
        return self.runner.settles_as(run)

    def drive(self, run_id: int, plan: PlanRecord, options: RunOptions | None = None) -> RunOutcome:
        if run_id == self.broken:
            raise self.error
        return self.runner.drive(run_id, plan, options)

    def tell(self, outcome: RunOutcome) -> None:
        self.runner.tell(outcome)


def _two_runs(rig: Rig) -> tuple[int, int]:
    """Two runs left pending by a daemon that died (inside their slot's grace)."""
    then = datetime.now(UTC) - timedelta(minutes=5)
    first = record_run(rig.engine, rig.plan("swap"), SLOT, now=then)
    second = record_run(rig.engine, rig.plan("swap"), SLOT, now=then)
    assert first is not None
    assert second is not None
    return first, second


def test_a_run_whose_recovery_raises_does_not_stall_the_others(make_rig: RigFactory) -> None:
    rig = make_rig()
    first, second = _two_runs(rig)
    driver = Breaks(rig.runner(), first, KeyError("expires_at"))
    with structlog.testing.capture_logs() as logs:
        for _ in range(2):  # every pass: the broken run comes first again
            recover(driver, startup=True)
    assert rig.run(second).status is RunStatus.SUCCEEDED, rig.steps(second)
    assert len(rig.landed()) == 1
    failed = [e for e in logs if e.get("event") == "run_recovery_failed"]
    assert len(failed) == 2, logs  # once a pass, with its run id
    assert {e["run_id"] for e in failed} == {first}
    assert rig.run(first).status.in_flight  # left for the next pass, not ended blindly


def test_a_fatal_error_still_stops_the_pass(make_rig: RigFactory) -> None:
    rig = make_rig()
    first, second = _two_runs(rig)
    driver = Breaks(rig.runner(), first, FatalError("the API key was refused"))
    with pytest.raises(FatalError):
        recover(driver, startup=True)
    assert rig.run(second).status.in_flight  # the daemon stops: nothing more is ordered
