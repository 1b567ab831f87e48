"""A cap that a config reload adds counts the runs already past their pre-flight.

Before the reload no cap limits the mint, so run A passes its pre-flight without a
reservation (`caps_apply` is false: its amount reaches its row only at the
`requested` step). The operator adds a cap (`safety.caps`, reloaded: in effect for
the runs that start from now on) while A's order call is under way. Run B, checked
under the new cap, must count A: A's money moves after the cap was set. Before the
fix B's check read A's row without an amount, let B through, and both spent:
twice the new cap's room.

Real store (SQLite and PostgreSQL), the emulator over loopback (a slow order call
holds A where a real slow API would), real signed transactions.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from jupcron.config import Config
from jupcron.domain import RunStatus
from jupcron.runner.outcome import RunOutcome
from tests.fixtures.runner import USDC, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
RUN = 5_000_000  # the rig's swap: 5 USDC a run
CAP = RUN + RUN // 2  # room for one run, not two


def with_cap(config: Config) -> Config:
    data = config.model_dump(mode="python")
    data["safety"]["caps"] = [{"mint": USDC, "per_day": CAP}]
    return Config.model_validate(data)


def test_a_cap_added_while_a_run_is_ordering_counts_that_run(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, loopback=True)
    runner = rig.runner()
    held = rig.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=3)
    first, second = rig.plan("swap"), rig.plan("swap")
    outcomes: dict[str, RunOutcome] = {}

    def fire_first() -> None:
        outcomes["first"] = outcome_of(runner.fire(first, SLOT))

    thread = threading.Thread(target=fire_first)
    thread.start()
    deadline = time.monotonic() + 10
    while held.fired == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # A is past its pre-flight, its order call held
    assert held.fired == 1

    runner.reconfigure(with_cap(rig.config))  # the reload adds the cap now
    outcomes["second"] = outcome_of(runner.fire(second, SLOT))
    thread.join(30)

    assert outcomes["first"].status is RunStatus.SUCCEEDED  # it started before the cap
    assert outcomes["second"].status is RunStatus.SKIPPED, outcomes["second"]
    assert "would be exceeded" in (outcomes["second"].error or "")
    assert len(rig.landed()) == 1
