"""A pool that cannot serve the candidates' read must not leave the leadership session
idle (review 27u).

The leadership session now ends after `idle_timeout` idle (review 27c: a frozen
daemon's wallets go). A live daemon keeps it busy with a turn every second; but a turn
first reads the candidates through the pool, and when that failed (the pool exhausted
by a burst of fires, ``too many clients``) the turn stopped there, the session stayed
idle, the server ended it, and the daemon dropped every wallet (``stepping_down``)
while its own connection was fine. Now the turn goes on with the candidates last read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine

from jupcron.service.shards import PgShardLeadership
from jupcron.service.wallet_leads import WalletLeads
from jupcron.store import control
from jupcron.store.control import NodeBeat
from jupcron.store.engine import begin, make_engine

pytestmark = pytest.mark.postgres

WALLETS = ["alice", "bob"]
IDLE = 2.0  # the leadership session's idle_session_timeout, seconds


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    made = make_engine(pg_url, pool_size=1, max_overflow=0, pool_timeout=0.1)
    yield made
    made.dispose()


def test_a_pool_outage_does_not_idle_out_the_leadership_session(engine: Engine) -> None:
    with begin(engine) as conn:
        if int(conn.exec_driver_sql("SHOW server_version_num").scalar_one()) < 140000:
            pytest.skip("idle_session_timeout needs PostgreSQL 14+")
        at = datetime.now(UTC)
        control.beat(conn, NodeBeat(node="pool:1", role="leader", role_since=at, started_at=at,
                                    last_beat=at, dry_run=False, kill_switch=None,
                                    version="t"))  # fmt: skip
    leads = WalletLeads(PgShardLeadership(engine, "pool:1", idle_timeout=IDLE), engine)
    try:
        leads.turn(WALLETS, now=True)
        assert leads.led == set(WALLETS)
        pid = leads.leadership.backend_pid  # type: ignore[attr-defined]
        with engine.connect():  # the pool's only connection taken: its reads time out
            for _ in range(10):  # 4 s of turns, twice the timeout
                time.sleep(0.4)
                assert leads.turn(WALLETS, now=True) is None
        assert leads.leadership.backend_pid == pid  # type: ignore[attr-defined]
        assert leads.turn(WALLETS, now=True) is None
        assert leads.led == set(WALLETS)
    finally:
        leads.release()
