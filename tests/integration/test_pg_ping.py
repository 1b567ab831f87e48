"""PostgreSQL's pooled connections: one idle `ping_after` or longer is pinged when
taken and replaced if its server side is gone (the write goes through); one given
back just now is taken without a ping, so a server side that vanished within that
second fails the one transaction that finds out, and the next one reconnects."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from jupcron.errors import StoreBusyError
from jupcron.store.engine import begin, make_engine


def _backend_pid(engine: Engine) -> int:
    with begin(engine) as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(pg_url: str, pid: int) -> None:
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


def test_an_idle_connection_whose_server_side_is_gone_is_replaced(pg_url: str) -> None:
    engine = make_engine(pg_url, ping_after=0.0, pool_size=1, max_overflow=0)
    try:
        first = _backend_pid(engine)
        _terminate(pg_url, first)
        second = _backend_pid(engine)  # pinged, found gone, replaced: no error
        assert second != first
    finally:
        engine.dispose()


def test_a_connection_given_back_just_now_is_used_without_a_ping(pg_url: str) -> None:
    engine = make_engine(pg_url, ping_after=3600.0, pool_size=1, max_overflow=0)
    try:
        first = _backend_pid(engine)
        assert _backend_pid(engine) == first  # the same connection, taken as it was
        _terminate(pg_url, first)
        with pytest.raises(StoreBusyError):  # not pinged: the transaction finds out
            _backend_pid(engine)
        assert _backend_pid(engine) != first  # and the next one has a fresh connection
    finally:
        engine.dispose()
