"""Every pooled PostgreSQL connection of the store carries TCP keepalives and a limit on
unacknowledged data (review 27k).

Without them, a server host that vanishes without a reset (a failover, a dropped
route) left a write waiting in ``poll()`` for the kernel's retransmission timeout,
15 minutes or more, and the group commit's leader with it: every write of the daemon
queued behind it. The leadership connection already had them; the pool had none.
What libpq was asked for is read back from the live connection (``PQconninfo``); a
URL that gives its own value keeps it."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from jupcron.store.engine import PG_TCP, make_engine

pytestmark = pytest.mark.postgres


def _settings(url: str) -> dict[str, str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            raw = conn.connection.dbapi_connection
            assert raw is not None
            return {o.keyword.decode(): (o.val or b"").decode() for o in raw.pgconn.info}
    finally:
        engine.dispose()


def test_pooled_connections_notice_a_vanished_server(pg_url: str) -> None:
    found = _settings(pg_url)
    assert {name: found[name] for name in PG_TCP} == {
        name: str(value) for name, value in PG_TCP.items()
    }


def test_the_urls_own_setting_wins(pg_url: str) -> None:
    joiner = "&" if "?" in pg_url else "?"
    found = _settings(f"{pg_url}{joiner}keepalives_idle=42")
    assert found["keepalives_idle"] == "42"
    assert found["tcp_user_timeout"] == str(PG_TCP["tcp_user_timeout"])
