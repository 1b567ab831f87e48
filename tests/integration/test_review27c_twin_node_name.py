"""Two daemons under one node name on one PostgreSQL (review 27c).

A node is ``host:pid``. Hosts cloned from one image keep one host name (``ubuntu``,
``localhost``), and a daemon started at boot, or as a container's first process
(pid 1), gets the same pid on each: two daemons, one node name. The leadership took
a session holding its node's presence lock for a stale one of its own process and
ended it (`pg_terminate_backend`): the other daemon lost every wallet it led, in the
middle of its fires, then did the same to this one on its next turn, and so on every
second, each ending the other's session. The second must refuse to take part, say
why, and leave the first's session, and its wallets, alone.

The first daemon here is a process of its own (the presence lock is taken in it).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.engine import make_url

from jupcron.errors import StoreBusyError
from jupcron.service.shards import PgShardLeadership, node_key
from jupcron.store.engine import make_engine

pytestmark = pytest.mark.postgres

WALLETS = ["alice", "bob"]
NODE = "ubuntu:1"

FIRST = textwrap.dedent(
    """
    import sys
    from jupcron.service.shards import PgShardLeadership
    from jupcron.store.engine import make_engine
    leadership = PgShardLeadership(make_engine(sys.argv[1]), sys.argv[2])
    print("led " + ",".join(sorted(leadership.rebalance(["alice", "bob"], [sys.argv[2]]))),
          flush=True)
    sys.stdin.readline()
    print("leads" if leadership.leads("alice") else "lost", flush=True)
    """
)


def _line(proc: subprocess.Popen[str]) -> str:
    """The child's next word (its log lines come first)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(("led ", "leads", "lost")):
            return line.strip()
    raise AssertionError("the first daemon exited")


@pytest.fixture
def first(pg_url: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", FIRST, pg_url, NODE],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_a_second_daemon_under_the_same_name_leaves_the_first_alone(
    pg_url: str, first: subprocess.Popen[str]
) -> None:
    assert _line(first) == "led alice,bob"
    engine = make_engine(pg_url)
    second = PgShardLeadership(engine, NODE)
    try:
        with pytest.raises(StoreBusyError, match=NODE):
            second.rebalance(WALLETS, [NODE])
        assert second.led() == frozenset()
        assert second.leads("alice") is False
        assert first.stdin is not None
        first.stdin.write("\n")
        first.stdin.flush()
        assert _line(first) == "leads"  # its session, and every wallet lock in it, kept
    finally:
        second.release()
        engine.dispose()


def _dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def test_a_session_of_the_same_name_in_another_database_is_left_alone(
    pg_url: str, pg_empty_url: str
) -> None:
    """An advisory lock is one database's. A stale session of ours in our database is
    ended; one holding our node's key in another database on the server (another
    deployment's daemon, under the same name) was ended with it, and now would stop
    us taking part: neither is in our way."""
    with (
        psycopg.connect(_dsn(pg_empty_url), autocommit=True,
                        application_name="jupcron-shards another") as elsewhere,
        psycopg.connect(_dsn(pg_url), autocommit=True) as stale,
    ):  # fmt: skip
        elsewhere.execute("SELECT pg_advisory_lock(%s)", (node_key(NODE),))
        stale.execute("SELECT pg_advisory_lock(%s)", (node_key(NODE),))  # as our earlier one
        engine = make_engine(pg_url)
        mine = PgShardLeadership(engine, NODE)
        try:
            assert mine.rebalance(WALLETS, [NODE]) == set(WALLETS)
            with pytest.raises(psycopg.OperationalError):
                stale.execute("SELECT 1")
            assert elsewhere.execute("SELECT 1").fetchone() == (1,)
        finally:
            mine.release()
            engine.dispose()
