"""`jupcron fire NAME` when another run of the plan is claimed after this fire looked
for one and before it claimed its own: a second `jupcron fire` started a moment
earlier (a double Enter, two shells, a wrapper's retry), or the daemon's claim of
the plan's slot due this instant.

The refusal beside an unended run was a read in a transaction of its own, the claim
a later one: a run claimed between them was not seen, the fire claimed a slot of its
own ("now") beside it, and the plan bought twice. The check belongs to the claim's
own transaction now (under a per-plan lock on PostgreSQL), so the fire is refused
with the message it gives when the other run was there first, and writes nothing.

The CLI runs in this process (its claim through the real run store, on a SQLite file
and on PostgreSQL), against the emulator over loopback; the other claim is made, for
real, at the one moment between the fire's decision and its claim that the run
store's `claim` offers: when the fire calls it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import CliRunner, Result

from jupcron.cli.main import cli
from jupcron.domain import RunStatus
from jupcron.store.engine import make_engine
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.fixtures.runs import record_run


@pytest.fixture
def env(daemon_env: DaemonEnvFactory, db_url: str) -> DaemonEnv:
    made = daemon_env(db_url=db_url)
    made.write_plans(swap_plan("a", {"every": "1d"}))
    made.apply()
    return made


@pytest.fixture
def another_claim_first(
    env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    """When this process's first claim is about to be made, another claim of the same
    plan is made first (`trigger` set by the test; its run id put in ``"run"``)."""
    other: dict[str, Any] = {"trigger": "manual", "run": None, "made": False}
    engine = make_engine(env.db_url)
    real_claim = SqlRunStore.claim

    def claim(self: SqlRunStore, plan: PlanRecord, *args: Any, **kwargs: Any) -> Any:
        if not other["made"]:  # the other claim itself goes through here too
            other["made"] = True
            now = datetime.now(UTC)
            other["run"] = record_run(engine, plan, now, now=now, trigger=other["trigger"])
            assert other["run"] is not None
        return real_claim(self, plan, *args, **kwargs)

    monkeypatch.setattr(SqlRunStore, "claim", claim)
    try:
        yield other
    finally:
        engine.dispose()


def _fire(env: DaemonEnv, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--config", str(env.config), "fire", "a", *args])


def _runs(env: DaemonEnv) -> list[tuple[int, str, str]]:
    return [(r["run_id"], r["trigger"], r["status"]) for r in env.rows()]


def _refused_beside(env: DaemonEnv, done: Result, theirs: int, trigger: str) -> None:
    assert done.exit_code == 1, done.output
    assert f"its run {theirs} ({trigger}," in done.output
    assert "is pending" in done.output
    assert "--force fires beside it anyway" in done.output
    # nothing written: their run alone, untouched; nothing ordered
    assert _runs(env) == [(theirs, trigger, "pending")]
    assert env.emulator.ledger.requests.get("ultra_order") is None
    assert env.emulator.ledger.landed() == []


def test_a_fire_beside_another_fire_claimed_since_it_looked_is_refused(
    env: DaemonEnv, another_claim_first: dict[str, Any]
) -> None:
    done = _fire(env)

    _refused_beside(env, done, another_claim_first["run"], "manual")


def test_a_fire_beside_the_daemons_claim_of_its_slot_since_it_looked_is_refused(
    env: DaemonEnv, another_claim_first: dict[str, Any]
) -> None:
    another_claim_first["trigger"] = "schedule"

    done = _fire(env)

    _refused_beside(env, done, another_claim_first["run"], "schedule")


def test_force_still_fires_beside_a_run_claimed_since_it_looked(
    env: DaemonEnv, another_claim_first: dict[str, Any]
) -> None:
    done = _fire(env, "--force")

    assert done.exit_code == 0, done.output
    assert "succeeded" in done.output
    theirs = another_claim_first["run"]
    assert [(r, t, s) for r, t, s in _runs(env) if r == theirs] == [(theirs, "manual", "pending")]
    assert len(env.emulator.ledger.landed()) == 1


def test_a_dry_run_is_not_refused_beside_a_run_claimed_since_it_looked(
    env: DaemonEnv, another_claim_first: dict[str, Any]
) -> None:
    done = _fire(env, "--dry-run")

    assert done.exit_code == 0, done.output
    assert "dry_run" in done.output
    assert env.emulator.ledger.landed() == []


def test_a_fire_with_no_other_run_still_fires(env: DaemonEnv) -> None:
    done = _fire(env)

    assert done.exit_code == 0, done.output
    (row,) = env.rows()
    assert (row["trigger"], row["status"]) == ("manual", RunStatus.SUCCEEDED.value)
    assert len(env.emulator.ledger.landed()) == 1
