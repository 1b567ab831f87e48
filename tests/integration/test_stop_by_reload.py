"""A stop set in the config and reloaded (SIGHUP or the file watch: `Runner.reconfigure`)
reaches a run already past its pre-flight, before it signs.

A run keeps the config it was claimed with for its terms (caps, guard policy), but
the kill switch and `safety.dry_run` say what may be signed *now*: an operator who
turns either on expects nothing more to be signed for real from that moment, whatever
run is waiting on a slow order call. And a run claimed as a dry run stays one when
the reload turns `safety.dry_run` off: its claim recorded its mode.

Real store (SQLite and PostgreSQL), the emulator over loopback (a slow order call
holds the run where a slow API would), real signed transactions.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from jupcron.config import Config
from jupcron.domain import RunStatus
from jupcron.runner.core import Runner
from jupcron.runner.outcome import RunOutcome
from tests.fixtures.runner import Rig, RigFactory, outcome_of

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)
HOLD = 2.0  # seconds the order call is held: the reload lands inside it


def reloaded(config: Config, **safety: Any) -> Config:
    """`config` with these `safety` settings, as a reload puts it in effect."""
    data = config.model_dump(mode="python")
    data["safety"].update(safety)
    return Config.model_validate(data)


def fire_with_reload(rig: Rig, runner: Runner, new: Config) -> RunOutcome:
    """Fire a swap whose order call is held; `new` is put in effect (the reload) while
    the run waits for the answer, past its pre-flight and before it signs."""
    held = rig.emulator.faults.add("slow", count=1, operation="ultra_order", seconds=HOLD)
    plan = rig.plan("swap")
    outcomes: list[RunOutcome] = []
    thread = threading.Thread(target=lambda: outcomes.append(outcome_of(runner.fire(plan, SLOT))))
    thread.start()
    deadline = time.monotonic() + 10
    while held.fired == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # the run is past its pre-flight, its order call held
    assert held.fired == 1
    runner.reconfigure(new)
    thread.join(30)
    assert outcomes, "the run did not end"
    return outcomes[0]


def assert_nothing_signed(rig: Rig, outcome: RunOutcome) -> None:
    assert rig.emulator.ledger.requests.get("ultra_order") == 1  # it was asked for
    run = rig.run(outcome.run_id)
    assert (run.signed_tx, run.signature) == (None, None)
    assert "signed" not in rig.steps(outcome.run_id)
    assert rig.emulator.ledger.requests.get("execute_ultra", 0) == 0
    assert rig.landed() == []


def test_kill_switch_reloaded_on_during_the_order_call_signs_nothing(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(db_url=db_url, loopback=True)
    runner = rig.runner()
    outcome = fire_with_reload(rig, runner, reloaded(rig.config, kill_switch=True))
    assert outcome.status is RunStatus.SKIPPED, outcome
    assert outcome.error == "kill switch is on (safety.kill_switch)"
    assert "stopped_before_signing" in rig.steps(outcome.run_id)
    assert_nothing_signed(rig, outcome)


def test_dry_run_reloaded_on_during_the_order_call_signs_nothing(
    make_rig: RigFactory, db_url: str
) -> None:
    """Turned on: the run is ordered and checked, never signed: a dry run, which says
    that the config in effect at its sign step made it one."""
    rig = make_rig(db_url=db_url, loopback=True)
    runner = rig.runner()
    new = reloaded(rig.config, dry_run=True)
    outcome = fire_with_reload(rig, runner, new)
    assert outcome.status is RunStatus.DRY_RUN, outcome
    assert_nothing_signed(rig, outcome)
    (detail,) = [d for _, step, d in rig.events(outcome.run_id) if step == "dry_run"]
    assert detail["dry_run"] is True
    assert "safety.dry_run" in detail["source"]
    assert detail["config"] == new.digest  # the config that stopped it


def test_dry_run_reloaded_off_during_the_order_call_keeps_the_run_dry(
    make_rig: RigFactory, db_url: str
) -> None:
    """Turned off: a run claimed as a dry run is still one (its claim recorded its
    mode); the runs claimed from now on sign."""
    rig = make_rig(db_url=db_url, loopback=True, safety={"dry_run": True})
    runner = rig.runner()
    outcome = fire_with_reload(rig, runner, reloaded(rig.config, dry_run=False))
    assert outcome.status is RunStatus.DRY_RUN, outcome
    assert_nothing_signed(rig, outcome)
    # and the next run, claimed under the reloaded config, signs
    after = outcome_of(runner.fire(rig.plan("swap"), SLOT))
    assert after.status is RunStatus.SUCCEEDED, after
