"""A plan edited from a host whose clock runs a little ahead (review 27a).

`plans apply` may run on any host (docs/operations.md: "Apply plans from any host");
the change's time (``plans.updated_at``) is the applying host's clock. The daemon
that settles the change records the old version's slots "before the change" as
skipped (`jupcron.scheduling.slots.record_unfired`), up to that time. A slot still
ahead on the daemon's own clock has not been missed: the new version fires it, as
it fires any slot after an edit made a few seconds before it. An amount edited 3 s
before an hourly slot from a host 5 s ahead must not cost that hour's run (recorded
``skipped``, "missed: the plan changed before this slot fired", and its fire then
refused by the unique (plan, slot) key).

Real SQLite file and the PostgreSQL fixture, the real scheduler; its clock is a
parameter (no waiting for the hour).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from jupcron.plans.apply import apply_paths
from jupcron.scheduling.scheduler import Scheduler
from tests.fixtures.plans import SOL, USDC, PlanFiles, swap_plan
from tests.fixtures.scheduler import MovableClock as Clock
from tests.fixtures.scheduler import Timed, run_rows

NINE = datetime(2026, 3, 2, 9, tzinfo=UTC)
HOURLY = {"cron": "0 * * * *"}


def hourly(amount: int) -> dict[str, object]:
    request = {"inputMint": USDC, "outputMint": SOL, "amount": amount}
    return swap_plan("hourly", schedule=HOURLY, request=request)


def test_an_edit_from_a_host_ahead_does_not_skip_the_slot_still_to_come_here(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, started: list[Scheduler]
) -> None:
    apply_paths(plans_factory, [plan_files({"p.yaml": [hourly(1_000_000)]})],
                now=NINE - timedelta(minutes=30))  # fmt: skip
    clock = Clock(NINE - timedelta(seconds=3))
    fires = Timed(plans_factory, clock)
    scheduler = Scheduler(plans_factory, fires, poll_interval=3600, clock=clock)
    started.append(scheduler)
    scheduler.start()

    # 3 s before 09:00 here, the amount is changed from a host whose clock reads 09:00:02
    apply_paths(plans_factory, [plan_files({"p.yaml": [hourly(2_000_000)]})],
                now=NINE + timedelta(seconds=2))  # fmt: skip
    diff = scheduler.reload()
    assert diff is not None
    assert diff.changed == ("hourly",)

    assert fires.wait_for(lambda: bool(fires.calls), timeout=15), run_rows(plans_factory)
    assert fires.calls == [("hourly", NINE)]
    assert run_rows(plans_factory) == [(NINE, "succeeded", None)]
    assert fires.at[("hourly", NINE)] >= NINE
