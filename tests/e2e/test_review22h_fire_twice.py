"""`jupcron fire NAME` beside another run of the same plan that has not ended: a second
fire while the first is still ordering or sending (an impatient operator, a script's
retry, two shells), or after one was left ``submitted`` or ``in_doubt``.

Each fire claims the slot "now", a fresh slot every time, so the unique (plan, slot)
claim never stopped a second one: before, both ordered, signed and sent, and the
wallet bought twice (the emulator's ledger shows two landed swaps), though the docs
say "do not fire again before it is settled". A fire now refuses while the plan has a
run in flight or in_doubt, naming it; `--force` fires anyway.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from typing import Any

from jupcron.domain import RunStatus
from jupcron.store.engine import make_engine, session_factory
from jupcron.store.plans import get_plan
from tests.e2e.test_fire_interrupted import fire_while_held
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.fixtures.runs import record_run


def _second_fire(env: DaemonEnv, into: list[subprocess.CompletedProcess[str]]) -> None:
    into.append(env.jupcron("fire", "a"))


def test_a_second_fire_while_the_first_is_sending_buys_nothing(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    # the first fire's execute is held: it is signed and sending when the second comes
    env.emulator.faults.add("slow", count=1, operation="execute_ultra", seconds=6)
    second: list[subprocess.CompletedProcess[str]] = []

    code, first_said = fire_while_held(env, "a", lambda _proc: _second_fire(env, second))

    assert code == 0, first_said
    (again,) = second
    assert again.returncode == 1, again.stdout + again.stderr
    (row,) = env.rows()  # the refused fire claimed nothing
    assert row["status"] == "succeeded"
    assert f"run {row['run_id']}" in again.stderr
    assert "in flight" in again.stderr or "submitted" in again.stderr or "signed" in again.stderr
    assert "--force" in again.stderr
    assert len(env.emulator.ledger.landed()) == 1  # one purchase, not two


def _stored_run(env: DaemonEnv, status: RunStatus, **fields: Any) -> int:
    engine = make_engine(env.db_url)
    try:
        with session_factory(engine)() as session:
            plan = get_plan(session, "a")
        assert plan is not None
        then = datetime.now(UTC) - timedelta(minutes=5)
        run_id = record_run(engine, plan, then, now=then, status=status, **fields)
    finally:
        engine.dispose()
    assert run_id is not None
    return run_id


def test_a_fire_after_one_left_in_doubt_is_refused_until_settled(
    daemon_env: DaemonEnvFactory, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    doubtful = _stored_run(
        env, RunStatus.IN_DOUBT, request_id="r-1", signature="5" * 64, signed_tx="AAAA",
    )  # fmt: skip

    done = env.jupcron("fire", "a")

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"run {doubtful}" in done.stderr
    assert "in_doubt" in done.stderr
    assert f"jupcron settle {doubtful}" in done.stderr
    assert env.emulator.ledger.landed() == []
    assert [r["run_id"] for r in env.rows()] == [doubtful]
    # settled as not landed, the plan may be fired again
    settled = env.jupcron("settle", str(doubtful), "--not-landed", "--reason", "explorer: none")
    assert settled.returncode == 0, settled.stderr
    again = env.jupcron("fire", "a")
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(env.emulator.ledger.landed()) == 1


def test_force_fires_beside_an_unsettled_run(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    _stored_run(env, RunStatus.IN_DOUBT, request_id="r-1", signature="5" * 64, signed_tx="AAAA")

    done = env.jupcron("fire", "a", "--force")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "succeeded" in done.stdout
    assert len(env.emulator.ledger.landed()) == 1


def test_a_fire_beside_a_daemons_run_in_flight_is_refused(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    # a scheduled run a daemon is ordering (requested: not signed yet)
    theirs = _stored_run(env, RunStatus.REQUESTED, request_id="r-d", unsigned_tx="AAAA")

    done = env.jupcron("fire", "a")

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"run {theirs}" in done.stderr
    assert "requested" in done.stderr
    assert env.emulator.ledger.requests.get("ultra_order") is None  # nothing ordered
    (row,) = env.rows()
    assert (row["run_id"], row["status"]) == (theirs, "requested")  # untouched


def test_a_dry_run_beside_an_unsettled_run_is_not_refused(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("a", {"every": "1d"}))
    env.apply()
    _stored_run(env, RunStatus.IN_DOUBT, request_id="r-1", signature="5" * 64, signed_tx="AAAA")

    done = env.jupcron("fire", "a", "--dry-run")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "dry_run" in done.stdout
    assert env.emulator.ledger.landed() == []
