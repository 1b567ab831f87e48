"""A daemon frozen while it leads wallets keeps them for as long as it is frozen
(review 27c; a design gap, not fixed here).

A wallet's lease is a session advisory lock: it lasts as long as the session, with no
time limit. A daemon stopped with SIGSTOP (an operator's ``kill -STOP``, a debugger,
a main loop stuck in a call that never returns, without systemd's watchdog to kill
it) has a kernel that still answers the server's TCP keepalives: its session, its
presence lock and every wallet lock in it stay. The other daemons see the wallets
held by a live node and wait; nobody fires their plans, nobody records the slots as
missed (the frozen daemon's scheduler would, and it is frozen), and `jupcron status`
shows the frozen daemon as "not running" (its heartbeat is stale) without saying
that it still holds wallets. DESIGN §6 promises a takeover within seconds when a
daemon dies; one that is frozen instead is never taken over.

The fix is a design decision: a lease that a frozen holder loses, the frozen driver
being fenced by the run's ``claimed_by`` compare-and-set (review 22b) when it resumes.
Either a live daemon ends the leadership session of a holder whose heartbeat (on the
database's clock) has been stale for a while, or the leadership session asks the
server to end it once idle (``-c idle_session_timeout=…`` beside the keepalives,
PostgreSQL 14+: a live daemon's session is busy every turn, a frozen one's is idle;
this test would then wait for that timeout). Here the frozen daemon is a
`WalletLeads` that stops taking turns, its heartbeat a minute old."""

from __future__ import annotations

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


@pytest.mark.xfail(strict=True, reason="design gap: a frozen holder keeps its wallets")
def test_the_wallets_of_a_frozen_daemon_are_taken_over(engine: Engine) -> None:
    frozen = WalletLeads(PgShardLeadership(engine, "frozen:1"), engine)
    live = WalletLeads(PgShardLeadership(engine, "live:2"), engine)
    try:
        _beat(engine, "frozen:1", 0)
        assert frozen.turn(WALLETS, now=True) is not None
        assert frozen.led == set(WALLETS)
        # frozen from here on: no more turns, its heartbeat goes stale, its session stays
        _beat(engine, "frozen:1", 60)
        _beat(engine, "live:2", 0)
        for _ in range(5):
            live.turn(WALLETS, now=True)
        assert live.led == set(WALLETS)
    finally:
        frozen.release()
        live.release()
