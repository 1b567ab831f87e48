"""Failover on PostgreSQL: two daemons, one leads; SIGKILL the leader and the
standby fires the next slot within 10 s; no slot ever fires twice."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime

from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan


def _runs(url: str) -> list[tuple[datetime, str, str, datetime]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT scheduled_for, status, claimed_by, created_at FROM runs ORDER BY id")
            )
            return [(r[0], r[1], r[2] or "", r[3]) for r in rows]
    finally:
        engine.dispose()


def test_standby_takes_over_within_ten_seconds(daemon_env: DaemonEnvFactory, pg_url: str) -> None:
    env = daemon_env(db_url=pg_url)
    env.write_plans(swap_plan("tick", {"every": "2s", "grace": 30}))
    env.apply()
    first = env.start()
    assert env.wait_until(lambda: "became_leader" in env.log_of(first), timeout=20), env.log_of(
        first
    )
    second = env.start()
    assert env.wait_until(lambda: "standby_waiting" in env.log_of(second), timeout=20), env.log_of(
        second
    )
    assert env.wait_until(lambda: len(_runs(pg_url)) >= 2, timeout=20)
    leader_pid = str(first.pid)
    # every run was the leader's (a slot that passed while it started is recorded as a
    # skipped miss, with no claimant: that is not the standby running it)
    ran = [claimed for _, status, claimed, _ in _runs(pg_url) if status != "skipped"]
    assert ran
    assert all(f":{leader_pid}" in claimed for claimed in ran)

    first.kill()
    first.wait(10)
    killed_at = datetime.now(UTC)
    took_over = lambda: [r for r in _runs(pg_url) if f":{second.pid}" in r[2]]  # noqa: E731
    assert env.wait_until(lambda: bool(took_over()), timeout=15), env.log_of(second)
    first_by_standby = min(r[3] for r in took_over())
    assert (first_by_standby - killed_at).total_seconds() <= 10
    time.sleep(3)  # a few more slots under the new leader

    runs = _runs(pg_url)
    slots = Counter(r[0] for r in runs)
    assert max(slots.values()) == 1  # no slot twice
    landed = env.emulator.ledger.landed()
    succeeded = [r for r in runs if r[1] == "succeeded"]
    assert len(landed) == len({e.request_id for e in landed})
    assert len(landed) >= len(succeeded)
    assert len(landed) <= len(runs)
    assert env.stop(second) == 0
