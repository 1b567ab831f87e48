"""PostgreSQL's pooled connections are pinged when taken and replaced if their
server side is gone: a restarted server costs a reconnect, not a failed write.
The group commit keeps one connection across consecutive batches; once it is
given back, the next batch's checkout pings again."""

from __future__ import annotations

import psycopg
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from jupcron.store.engine import begin, make_engine
from jupcron.store.group import GroupCommit


def _backend_pid(engine: Engine) -> int:
    with begin(engine) as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(pg_url: str, pid: int) -> None:
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


def test_a_pooled_connection_whose_server_side_is_gone_is_replaced(pg_url: str) -> None:
    engine = make_engine(pg_url, pool_size=1, max_overflow=0)
    try:
        first = _backend_pid(engine)
        _terminate(pg_url, first)
        second = _backend_pid(engine)  # pinged, found gone, replaced: no error
        assert second != first
    finally:
        engine.dispose()


def test_the_group_commit_checks_its_connection_when_it_takes_it_again(pg_url: str) -> None:
    engine = make_engine(pg_url, pool_size=1, max_overflow=0)
    group = GroupCommit(engine)
    try:
        first = group.run(lambda conn: conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
        _terminate(pg_url, first)  # while the group holds no connection (nothing queued)
        second = group.run(lambda conn: conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
        assert second != first
        assert engine.pool.checkedout() == 0
    finally:
        engine.dispose()
