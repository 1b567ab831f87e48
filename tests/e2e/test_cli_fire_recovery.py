"""`jupcron fire NAME` whose run is left in flight (no answer from execute) recovers
that run, and only that one: every other run in flight in the store may be a running
daemon's (it drives them; it recovers them itself once they go stale). Before, the
command recovered every run in flight in the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.domain import RunStatus
from jupcron.store import runs
from jupcron.store.engine import make_engine, session_factory
from jupcron.store.plans import get_plan
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan
from tests.fixtures.runs import record_run


def test_fire_recovers_its_own_run_and_leaves_the_others_in_flight(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("manual", {"every": "1d"}), swap_plan("daemons", {"every": "1d"}))
    env.apply()
    # a run a daemon is driving (or will recover): requested, untouched for an hour
    engine = make_engine(env.db_url)
    try:
        with session_factory(engine)() as session:
            plan = get_plan(session, "daemons")
        assert plan is not None
        long_ago = datetime.now(UTC) - timedelta(hours=1)
        other = record_run(
            engine, plan, long_ago, now=long_ago, status=RunStatus.REQUESTED,
            request_id="r-daemons", unsigned_tx="AAAA",
        )  # fmt: skip
    finally:
        engine.dispose()
    # every execute post goes unanswered: the fire's run stays submitted
    env.emulator.faults.add("drop", count=50, operation="execute_ultra")
    done = env.jupcron("fire", "manual")
    assert done.returncode == 1, done.stderr  # not settled: in flight
    assert "submitted" in done.stdout
    rows = {row["plan_name"]: row for row in env.rows()}
    assert rows["daemons"]["status"] == "requested"  # not touched by the fire
    assert rows["daemons"]["run_id"] == other
    engine = make_engine(env.db_url)
    try:
        with engine.connect() as conn:
            own = [step for _, step, _ in runs.events(conn, rows["manual"]["run_id"])]
            theirs = [step for _, step, _ in runs.events(conn, other)]
    finally:
        engine.dispose()
    assert "recovery" in own  # its own run was tried again (the same bytes)
    assert "recovery" not in theirs
