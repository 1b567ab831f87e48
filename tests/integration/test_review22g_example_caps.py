"""The plans a new operator copies must run at every slot their comments promise.

A cap is a rolling window (README: "the rolling 24 hours and 7 days before a run's
check"), and a run counts in it by when it finished. So the run of one window ago,
which finished a moment after its slot, is still inside the window when the next
window's run is checked. A cap of exactly the schedule's spend over its window
therefore skips a run every window:

- README's quickstart `hourly-swap` (1 USDC an hour, `per_day: 24000000`) loses one
  hour a day from its second day on;
- `config/plans/recurring.yaml`'s `weekly-sol-dca` ("Buy SOL with 200 USDC every
  week", `per_week: 200000000`) is skipped every second week: it buys half of what
  it says.

Real components: the plans as the documents hold them (README's YAML block, the
shipped files), the real plan loader and schedule, a real SQLite store, the runner
and the emulator, with the runner's clock set a second past each slot.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jupcron.domain import RunStatus
from jupcron.plans.load import load_plans
from jupcron.scheduling.schedule import next_fire_times, parse_schedule
from tests.fixtures.runner import Clock, RigFactory, outcome_of

ROOT = Path(__file__).resolve().parents[2]
# a Monday, three weeks before Berlin moves its clocks forward (2027-03-28)
START = datetime(2027, 3, 8, tzinfo=UTC)


def readme_plan(tmp_path: Path, name: str) -> Path:
    """The README's YAML block that holds `name: NAME`, as a plan file."""
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    (block,) = [b for b in blocks if re.search(rf"^name: {re.escape(name)}$", b, flags=re.M)]
    path = tmp_path / f"{name}.yaml"
    path.write_text(block)
    path.chmod(0o600)
    return path


def statuses(make_rig: RigFactory, db_url: str, path: Path, name: str, slots: int) -> list[str]:
    """Fire the plan at each of its next `slots` slots after START, as the daemon would,
    a second after each slot; the status of each run."""
    result = load_plans([path])
    assert result.problems == []
    (loaded,) = [p for p in result.plans if p.spec.name == name]
    spec = loaded.spec
    times = next_fire_times(parse_schedule(spec.schedule_dict()), START, slots)
    clock = Clock(times[0])
    rig = make_rig(db_url=db_url, clock=clock, swap_api="swap-v2")
    plan = rig.plan(str(spec.kind), request=spec.request_dict(), settings=spec.settings_dict(),
                    schedule=spec.schedule_dict(), name=name)  # fmt: skip
    runner = rig.runner()
    out = []
    for slot in times:
        clock.now = slot + timedelta(seconds=1)
        outcome = outcome_of(runner.fire(plan, slot))
        out.append(f"{slot:%Y-%m-%d %H:%M} {outcome.status} {outcome.error or ''}".strip())
    return out


def not_succeeded(lines: list[str]) -> list[str]:
    return [line for line in lines if f" {RunStatus.SUCCEEDED}" not in line]


def test_the_readme_hourly_swap_runs_every_hour_for_two_days(
    make_rig: RigFactory, sqlite_url: str, tmp_path: Path
) -> None:
    path = readme_plan(tmp_path, "hourly-swap")
    lines = statuses(make_rig, sqlite_url, path, "hourly-swap", 49)
    assert not_succeeded(lines) == []


@pytest.mark.parametrize(
    ("file", "name"),
    [
        ("config/plans/recurring.yaml", "weekly-sol-dca"),
        ("config/plans/swaps.yaml", "hourly-swap"),
    ],
)
def test_a_shipped_example_runs_at_each_of_its_slots(
    make_rig: RigFactory, sqlite_url: str, file: str, name: str
) -> None:
    slots = 49 if "hourly" in name else 5  # two days; five Mondays, over the DST change
    lines = statuses(make_rig, sqlite_url, ROOT / file, name, slots)
    assert not_succeeded(lines) == []
