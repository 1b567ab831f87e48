"""Which runs a daemon's recovery takes when it comes to lead (DESIGN §6).

Only the single daemon that took the one lock (SQLite) at its own start recovers
fresh runs too: nothing else can be driving them. A standby taking over, or a daemon
gaining wallets on PostgreSQL, may find runs another daemon is still driving (a lease
lost with its connection, a leader still finishing): those are left until they go
stale, and recovered right after. Before, both took every run at once."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from jupcron.domain import RunStatus
from jupcron.runner.core import Runner
from jupcron.service.duties import LeaderDuties
from jupcron.service.leading import Leading, one_unit
from jupcron.service.wallet_leading import WalletLeading
from jupcron.service.wallet_leads import Change
from tests.fixtures.runner import RigFactory
from tests.fixtures.runs import record_run

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@dataclass
class Duties:
    """What the leading side asks of `LeaderDuties`, recorded."""

    starts: list[bool] = field(default_factory=list)  # each start's `startup`
    gains: list[bool] = field(default_factory=list)  # each recovery for wallets gained

    def start(self, *, beside: bool = True, startup: bool) -> None:
        self.starts.append(startup)  # (asked for explicitly by every caller)

    def recover_gained(self, *, startup: bool = False) -> None:
        self.gains.append(startup)

    def recovering(self) -> bool:
        return False

    def maybe_recover(self) -> None: ...
    def step_down(self) -> None: ...
    def reload(self) -> None: ...
    def beside(self, on: bool) -> None: ...


class Lock:
    """A lock that answers each acquire from `answers`."""

    def __init__(self, *answers: bool) -> None:
        self.answers, self.held = list(answers), False

    def acquire(self, block: bool = True, **_: Any) -> bool:
        self.held = self.answers.pop(0)
        return self.held

    def is_leader(self) -> bool:
        return self.held

    def release(self) -> None:
        self.held = False


class Metrics:
    def set_leader(self, is_leader: bool) -> None: ...


def leading(lock: Lock, duties: Duties) -> Leading:
    units = one_unit(lock, lambda _: duties)
    return Leading(units, metrics=Metrics(), alert=lambda *a: None, since=NOW)


def test_the_single_daemon_taking_the_lock_at_its_start_recovers_fresh_runs_too() -> None:
    duties = Duties()
    lead = leading(Lock(True), duties)
    lead.take(lead.try_all())
    assert duties.starts == [True]


def test_a_standby_taking_over_leaves_fresh_runs_to_go_stale() -> None:
    duties = Duties()
    lead = leading(Lock(False, True), duties)
    lead.take(lead.try_all())  # another daemon has it: standby
    assert duties.starts == []
    lead.keep()  # the leader went: this one takes over while it may still be finishing
    assert duties.starts == [False]


class Leads:
    """Wallet leadership whose turns give the changes queued."""

    def __init__(self) -> None:
        self.led: frozenset[str] = frozenset()
        self.changes: list[Change | None] = []
        self.also_busy: Any = None

    def turn(self, wallets: Any, now: bool = False) -> Change | None:
        change = self.changes.pop(0) if self.changes else None
        if change is not None:
            self.led = change.led
        return change


def test_wallets_led_or_gained_on_postgresql_leave_fresh_runs_to_go_stale() -> None:
    duties, leads = Duties(), Leads()
    wallet = WalletLeading(
        leads, lambda scope: duties, wallets=lambda: ["a", "b"],
        set_leader=lambda on: None, alert=lambda *a: None, since=NOW,
    )  # fmt: skip
    a, ab = frozenset({"a"}), frozenset({"a", "b"})
    leads.changes = [Change(gained=a, lost=frozenset(), led=a)]
    wallet.take(wallet.try_all())  # at this daemon's start: another may have led "a"
    assert duties.starts == [False]
    leads.changes = [Change(gained=frozenset({"b"}), lost=frozenset(), led=ab)]
    wallet.keep()
    assert duties.gains == [False]


def test_a_gained_units_fresh_runs_are_recovered_once_stale(make_rig: RigFactory) -> None:
    rig = make_rig()
    plan = rig.plan("swap")
    just_now = datetime.now(UTC)
    run_id = record_run(rig.engine, plan, just_now - timedelta(seconds=1), now=just_now,
                        status=RunStatus.PENDING)  # fmt: skip
    runner: Runner = rig.runner()

    @dataclass
    class Runtime:
        runner: Runner

    duties = LeaderDuties(
        Runtime(runner), config=lambda: rig.config, still_leader=lambda: True,
        metrics=None, alert=lambda *a: None, on_fatal=lambda exc: None,
        stale_after=1.0,
    )  # fmt: skip

    def recovered() -> bool:
        return "recovery" in rig.steps(run_id)

    duties.recover_gained()  # the run is fresh: perhaps another daemon's
    while duties.recovering():
        time.sleep(0.05)
    assert not recovered()
    assert rig.run(run_id).status is RunStatus.PENDING
    deadline = time.monotonic() + 10
    while not recovered() and time.monotonic() < deadline:
        duties.maybe_recover()  # the daemon's loop turns
        time.sleep(0.2)
    while duties.recovering():
        time.sleep(0.05)
    assert recovered()  # once stale, without waiting for `runner.recovery_interval`
    assert rig.run(run_id).status is RunStatus.SUCCEEDED
