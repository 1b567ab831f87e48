"""A daemon frozen while it leads wallets loses them (review 27c, fixed by review 27u).

A wallet's lease is a session advisory lock: it lasts as long as the session. A
daemon stopped with SIGSTOP (an operator's ``kill -STOP``, a debugger, a main loop
stuck in a call that never returns, without systemd's watchdog to kill it) has a
kernel that still answers the server's TCP keepalives, so keepalives never end its
session. Unfixed, the other daemons saw the wallets held by a live node and waited;
nobody fired their plans or recorded the slots as missed. DESIGN §6 promises a
takeover within seconds when a daemon dies.

The leadership session now sets ``idle_session_timeout`` (PostgreSQL 14+; 60 s by
default, `PgShardLeadership(idle_timeout=…)`): a live daemon runs a statement on it
every turn, a frozen one's is idle and the server ends it. Here the frozen daemon is
a `WalletLeads` that stops taking turns, with a 1 s timeout; once it resumes, its
lease checks answer False and its next turn takes nothing back."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine

from jupcron.service.shards import PgShardLeadership
from jupcron.service.wallet_leads import WalletLeads
from jupcron.store import control
from jupcron.store.control import NodeBeat
from jupcron.store.engine import begin, make_engine

pytestmark = pytest.mark.postgres

WALLETS = ["alice", "bob", "carol"]
IDLE = 1.0  # the frozen daemon's idle_session_timeout, seconds


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    made = make_engine(pg_url)
    yield made
    made.dispose()


def _beat(engine: Engine, node: str, ago: float) -> None:
    at = datetime.now(UTC) - timedelta(seconds=ago)
    with begin(engine) as conn:
        control.beat(conn, NodeBeat(node=node, role="leader", role_since=at, started_at=at,
                                    last_beat=at, dry_run=False, kill_switch=None,
                                    version="t"))  # fmt: skip


def _server_version(engine: Engine) -> int:
    with begin(engine) as conn:
        return int(conn.exec_driver_sql("SHOW server_version_num").scalar_one())


def test_the_wallets_of_a_frozen_daemon_are_taken_over(engine: Engine) -> None:
    if _server_version(engine) < 140000:
        pytest.skip("idle_session_timeout needs PostgreSQL 14+")
    frozen_leadership = PgShardLeadership(engine, "frozen:1", idle_timeout=IDLE)
    frozen = WalletLeads(frozen_leadership, engine)
    live = WalletLeads(PgShardLeadership(engine, "live:2"), engine)
    try:
        _beat(engine, "frozen:1", 0)
        assert frozen.turn(WALLETS, now=True) is not None
        assert frozen.led == set(WALLETS)
        # frozen from here on: no more turns, its heartbeat goes stale, its session idles
        _beat(engine, "frozen:1", 60)
        _beat(engine, "live:2", 0)
        deadline = time.monotonic() + IDLE + 10.0  # the server's timeout, then a turn
        while live.led != set(WALLETS) and time.monotonic() < deadline:
            live.turn(WALLETS, now=True)
            time.sleep(0.2)
        assert live.led == set(WALLETS)
        # it resumes: the lease check before a fire fails, the next turn takes nothing
        assert not frozen.leads("alice")
        frozen.turn(WALLETS, now=True)
        assert frozen.led == set()
        assert live.led == set(WALLETS)
    finally:
        frozen.release()
        live.release()


def test_a_live_daemon_keeps_its_wallets_under_the_timeout(engine: Engine) -> None:
    """A daemon taking its turns (one statement each) never idles out."""
    if _server_version(engine) < 140000:
        pytest.skip("idle_session_timeout needs PostgreSQL 14+")
    idle = 3.0  # wide of the turns' 0.5 s: a loaded test machine does not idle it out
    leads = WalletLeads(PgShardLeadership(engine, "busy:3", idle_timeout=idle), engine)
    try:
        _beat(engine, "busy:3", 0)
        leads.turn(WALLETS, now=True)
        pid = leads.leadership.backend_pid  # type: ignore[attr-defined]
        for _ in range(8):  # 4 s of turns, past the timeout, each well inside it
            time.sleep(0.5)
            assert leads.turn(WALLETS, now=True) is None
        assert leads.led == set(WALLETS)
        assert leads.leadership.backend_pid == pid  # type: ignore[attr-defined]
    finally:
        leads.release()
