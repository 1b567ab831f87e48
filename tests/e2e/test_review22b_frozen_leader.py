"""A frozen leader (review 22b, lead 1): two daemons on one PostgreSQL lead one
wallet; the leader stops (SIGSTOP, at a failpoint between signing and the execute
POST) and its sessions are cut meanwhile (a partition, the server's keepalive
giving up on it), so the other takes the wallet over and settles the run; then the
frozen one resumes. It must post no second order for the slot, record no outcome
for a run that is no longer its own, and each slot lands at most once."""

from __future__ import annotations

import os
import signal
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from jupcron.store.engine import make_engine
from tests.chaos.check import check
from tests.fixtures.daemon import DaemonEnvFactory, swap_plan

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(240)]

TIMEOUT = 60.0
IN_FLIGHT = ("pending", "requested", "signed", "submitted")


def proc_state(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("State:"):
            return line.split()[1]
    return "?"


def client_ports(pid: int) -> set[int]:
    """The local TCP ports of `pid`'s sockets (its PostgreSQL sessions among them)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if parts[9] in inodes:
                ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return ports


def libpq(url: str) -> str:
    u = make_url(url)
    return f"host={u.host} port={u.port} user={u.username} dbname={u.database}"


def cut_sessions_of(url: str, pid: int) -> int:
    """End every PostgreSQL session of process `pid` (as a partition would)."""
    ports = client_ports(pid)
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, client_port FROM pg_stat_activity WHERE datname = current_database()"
        ).fetchall()
        ended = 0
        for backend, port in rows:
            if port in ports:
                conn.execute("SELECT pg_terminate_backend(%s)", (backend,))
                ended += 1
        return ended


def runs(url: str) -> list[dict[str, object]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT id, scheduled_for, status, request_id, signature, claimed_by "
                "FROM runs ORDER BY id"
            ))  # fmt: skip
            return [dict(r._mapping) for r in rows]
    finally:
        engine.dispose()


def steps(url: str, run_id: int) -> list[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT step FROM run_events WHERE run_id = :r ORDER BY id"), {"r": run_id}
            )
            return [r[0] for r in rows]
    finally:
        engine.dispose()


@pytest.mark.parametrize("point", ["before_execute"])  # "after_sign" passed too; ~17 s each
def test_a_frozen_leader_resuming_after_a_takeover_posts_and_records_nothing_of_its_old_run(
    daemon_env: DaemonEnvFactory, pg_url: str, point: str
) -> None:
    env = daemon_env(db_url=pg_url)
    env.write_config(logging={"level": "info", "format": "json"})
    env.write_plans(swap_plan("tick", {"every": "2s", "grace": 60}))
    env.apply()
    frozen = env.start({"JUPCRON_FAILPOINTS": f"{point}=stall"})
    assert env.wait_until(lambda: "became_leader" in env.log_of(frozen), timeout=TIMEOUT)
    heir = env.start()
    assert env.wait_until(lambda: "standby_waiting" in env.log_of(heir), timeout=TIMEOUT)
    assert env.wait_until(lambda: proc_state(frozen.pid) == "T", timeout=TIMEOUT)
    stuck = {r["id"] for r in runs(pg_url) if r["status"] in IN_FLIGHT}
    assert stuck, runs(pg_url)
    assert cut_sessions_of(pg_url, frozen.pid) >= 1
    # the heir takes the wallet over and, once they are stale, settles the runs left
    assert env.wait_until(
        lambda: not any(r["status"] in IN_FLIGHT for r in runs(pg_url) if r["id"] in stuck),
        timeout=TIMEOUT,
    ), (runs(pg_url), env.log_of(heir)[-3000:])
    settled = {i: steps(pg_url, i) for i in stuck}
    final = {r["id"]: r["status"] for r in runs(pg_url) if r["id"] in stuck}
    os.kill(frozen.pid, signal.SIGCONT)
    # the frozen one resumes: its drives of those runs end
    assert env.wait_until(
        lambda: (
            len(env.events(frozen, "run_taken_over"))
            + len([e for e in env.events(frozen, "run_finished") if e.get("run_id") in stuck])
            >= len(stuck)
        ),
        timeout=TIMEOUT,
    ), env.log_of(frozen)[-4000:]
    stopped_at = datetime.now(UTC)
    for proc in (frozen, heir):
        env.stop(proc, timeout=60)
    for run_id in sorted(stuck):
        after = steps(pg_url, run_id)
        row = next(r for r in runs(pg_url) if r["id"] == run_id)
        assert row["status"] == final[run_id]
        # nothing but attempts was added to the run's record after the heir settled it
        assert [s for s in after[len(settled[run_id]) :] if s != "attempt"] == [], after
    landed = env.emulator.ledger.landed()
    verdict = check(pg_url, landed, stopped_at)
    assert verdict.duplicates == 0, verdict.details
    assert verdict.wrong == 0, verdict.details
    slots = Counter(r["scheduled_for"] for r in runs(pg_url))
    assert max(slots.values()) == 1
    assert len(landed) == len({e.request_id for e in landed})
