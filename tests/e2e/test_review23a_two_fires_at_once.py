"""Two `jupcron fire NAME` of one plan at the same instant (a double Enter, two shells,
a wrapper's retry), and a fire beside the daemon's claim of the plan's slot not yet
committed: real CLI processes on PostgreSQL, against the emulator over loopback.

Each fire looked for an unended run of the plan in one transaction and claimed its
slot ("now", its own) in a later one; a fire's look does not see a claim that is not
committed yet either. Two fires that both looked before either claimed both bought.

The interleaving is forced, not hoped for: the test holds a SHARE lock on `runs`
(reads go on, every insert into it waits), so each fire stops at its first write of
a run; once the database shows both waiting, the lock goes. Before, both had looked
(and seen nothing) by then, and both claimed. Now one claims and the other, which
looks inside its claim's transaction under the plan's lock, is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, text

from jupcron.store import runwrite
from jupcron.store.engine import make_engine, session_factory
from jupcron.store.plans import get_plan
from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory, swap_plan
from tests.support import clifork

# the backends (of this database) waiting on a lock: a fire's claim (its insert, or,
# since the fix, the plan's advisory lock before it)
_WAITING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
    "AND wait_event_type = 'Lock'"
)
_WAITING_ADVISORY = text(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
    "AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
)


@pytest.fixture
def env(daemon_env: DaemonEnvFactory, pg_url: str) -> DaemonEnv:
    made = daemon_env(db_url=pg_url)
    made.write_plans(swap_plan("a", {"every": "1d"}))
    made.apply()
    return made


@pytest.fixture
def engine(env: DaemonEnv) -> Iterator[Engine]:
    made = make_engine(env.db_url)
    try:
        yield made
    finally:
        made.dispose()


def _start_fire(env: DaemonEnv, log: Path) -> clifork.ForkedProcess:
    log.write_text("")
    return clifork.start(["--config", str(env.config), "fire", "a"], env=env._env({}), stdout=log)


def _count(conn: Connection, query: object) -> int:
    return int(conn.execute(query).scalar_one())  # type: ignore[call-overload]


def _wait_for(env: DaemonEnv, watcher: Connection, query: object, n: int,
              procs: list[clifork.ForkedProcess]) -> None:  # fmt: skip
    """Until `n` backends wait as `query` counts them, or a fire has ended."""
    assert env.wait_until(
        lambda: _count(watcher, query) >= n or any(p.poll() is not None for p in procs),
        timeout=30, step=0.05,
    )  # fmt: skip


def test_two_fires_at_the_same_instant_buy_once(env: DaemonEnv, engine: Engine) -> None:
    logs = [env.root / "fire-0.log", env.root / "fire-1.log"]
    procs: list[clifork.ForkedProcess] = []
    try:
        with engine.connect() as watcher, engine.connect() as holder:
            watcher.execution_options(isolation_level="AUTOCOMMIT")
            held = holder.begin()
            holder.execute(text("LOCK TABLE runs IN SHARE MODE"))  # inserts wait, reads go on
            procs = [_start_fire(env, log) for log in logs]
            _wait_for(env, watcher, _WAITING, 2, procs)
            assert all(p.poll() is None for p in procs), [log.read_text() for log in logs]
            held.rollback()
        codes = [p.wait(60) for p in procs]
    finally:
        for proc in procs:
            proc.kill()
    said = [log.read_text() for log in logs]

    assert sorted(codes) == [0, 1], said
    won, lost = (said[0], said[1]) if codes[0] == 0 else (said[1], said[0])
    (row,) = env.rows()
    assert row["status"] == "succeeded"
    assert f"run {row['run_id']}  a  succeeded" in won
    assert f"its run {row['run_id']} (manual," in lost
    assert "--force fires beside it anyway" in lost
    assert len(env.emulator.ledger.landed()) == 1  # one purchase, not two


def test_a_fire_beside_the_daemons_claim_not_yet_committed_is_refused(
    env: DaemonEnv, engine: Engine
) -> None:
    with session_factory(engine)() as session:
        plan = get_plan(session, "a")
    assert plan is not None
    log = env.root / "fire.log"
    proc: clifork.ForkedProcess | None = None
    try:
        with engine.connect() as watcher, engine.connect() as daemon:
            watcher.execution_options(isolation_level="AUTOCOMMIT")
            batch = daemon.begin()  # a daemon's group commit, its claim made, not yet committed
            now = datetime.now(UTC)
            theirs = runwrite.claim(daemon, plan, now, now=now, claimed_by="daemon")
            assert theirs is not None
            proc = _start_fire(env, log)
            # the fire waits for the daemon's transaction (before, it did not, and bought)
            _wait_for(env, watcher, _WAITING_ADVISORY, 1, [proc])
            batch.commit()
        code = proc.wait(60)
    finally:
        if proc is not None:
            proc.kill()
    said = log.read_text()

    assert code == 1, said
    assert f"its run {theirs.id} (schedule," in said
    assert "is pending" in said
    assert [(r["run_id"], r["status"]) for r in env.rows()] == [(theirs.id, "pending")]
    assert env.emulator.ledger.requests.get("ultra_order") is None  # nothing ordered
