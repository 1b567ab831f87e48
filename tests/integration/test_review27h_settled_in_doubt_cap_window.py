"""An in_doubt run counts against the caps for when its money may have moved: from its
submission until a window after it went in_doubt. The operator's verdict that it landed
(`jupcron settle --landed`), given days later, says that the money did move then: it
must not count the run again, in the window of the settle's own time, beside the runs
that spend now (they were skipped, "cap would be exceeded", for a spend of days ago).
On SQLite and PostgreSQL, the real runner, store and emulator."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.runner.manual import Verdict, settle_in_doubt
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import ONE_ATTEMPT, USDC, Clock, RigFactory, outcome_of

START = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DAY = 86_400


def test_a_landed_verdict_days_later_does_not_spend_the_cap_again(
    make_rig: RigFactory, db_url: str
) -> None:
    clock = Clock(START)
    # one 5 USDC run a day fits; two do not
    rig = make_rig(db_url=db_url, clock=clock, api=ONE_ATTEMPT,
                   safety={"caps": [{"mint": USDC, "per_day": 7_000_000}]})  # fmt: skip
    plan = rig.plan("swap", schedule={"every": "1h", "grace": "1h"})
    doubted = rig.in_doubt_swap(plan, clock.now, clock)
    rig.emulator.faults.clear()  # answers come through again
    runner = rig.runner()

    clock.advance(60)  # while it is in doubt, its 5 USDC count (it may have landed)
    beside = outcome_of(runner.fire(plan, clock.now))
    assert beside.status is RunStatus.SKIPPED, beside.error
    assert "per_day=7000000" in (beside.error or "")

    clock.advance(3 * DAY)  # three days on the operator looks it up: it landed then
    settled = settle_in_doubt(
        SqlRunStore(rig.engine), doubted,
        Verdict(landed=True, reason="found in an explorer, no error", by="op"), now=clock.now,
    )  # fmt: skip
    assert settled.status is RunStatus.SUCCEEDED

    clock.advance(60)  # the day's first run: nothing was spent in the last 24 hours
    today = outcome_of(runner.fire(plan, clock.now))
    assert today.status is RunStatus.SUCCEEDED, today.error
