"""Leadership per wallet on a real PostgreSQL: several `PgShardLeadership` objects,
each on its own connection, as several daemons would hold them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from structlog.testing import capture_logs

from jupcron.errors import StoreBusyError
from jupcron.service.assign import assign
from jupcron.service.shards import (
    PgShardLeadership,
    lock_key,
    node_key,
    split_key,
    wallet_key,
)
from jupcron.store.engine import make_engine
from tests.support.pgcluster import free_port
from tests.support.wait import wait_until

WALLETS = ["alice", "bob", "carol"]


class Clock:
    """The orphan timer's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url)
    yield engine
    engine.dispose()


Make = Callable[[str], PgShardLeadership]


@pytest.fixture
def make(pg_engine: Engine) -> Iterator[tuple[Make, Clock]]:
    made: list[PgShardLeadership] = []
    clock = Clock()

    def new(node: str) -> PgShardLeadership:
        one = PgShardLeadership(pg_engine, node, orphan_after=3.0, monotonic=clock)
        made.append(one)
        return one

    yield new, clock
    for one in made:
        one.release()


def turn(members: list[PgShardLeadership], rounds: int = 2) -> dict[str, frozenset[str]]:
    """Every member rebalances, ``rounds`` times (a hand-over takes two turns)."""
    names = [m.node for m in members]
    led: dict[str, frozenset[str]] = {}
    for _ in range(rounds):
        for m in members:
            led[m.node] = m.rebalance(WALLETS, names)
    return led


def owners(led: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {w: [] for w in WALLETS}
    for node, wallets in led.items():
        for w in wallets:
            found[w].append(node)
    return found


def terminate(pg_url: str, pid: int) -> None:
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


def test_lock_key_is_stable_and_signed_64_bit() -> None:
    assert lock_key("jupcron") == lock_key("jupcron")
    assert lock_key("jupcron") != lock_key("other")
    assert -(2**63) <= lock_key("jupcron") < 2**63


def test_unreachable_postgres_is_store_busy() -> None:
    url = f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/none"
    engine = make_engine(url)
    leadership = PgShardLeadership(engine, "node-a")
    with pytest.raises(StoreBusyError, match="database unavailable"):
        leadership.rebalance(WALLETS, ["node-a"])
    assert leadership.leads("alice") is False
    engine.dispose()


def test_split_key_matches_pg_locks(pg_url: str, make: tuple[Make, Clock]) -> None:
    new, _ = make
    one = new("a:1")
    assert one.rebalance(["alice"], []) == {"alice"}
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory'"
        ).fetchall()
    assert split_key(wallet_key("alice")) in {(int(c), int(o)) for c, o in rows}


@pytest.mark.postgres
def test_one_daemon_leads_every_wallet(make: tuple[Make, Clock]) -> None:
    new, _ = make
    one = new("a:1")
    assert one.rebalance(WALLETS, ["a:1"]) == set(WALLETS)
    assert all(one.leads(w) for w in WALLETS)
    assert not one.leads("dave")


@pytest.mark.postgres
def test_three_daemons_share_the_wallets_one_each(make: tuple[Make, Clock]) -> None:
    new, _ = make
    members = [new("a:1"), new("b:2"), new("c:3")]
    led = turn(members)
    found = owners(led)
    assert all(len(nodes) == 1 for nodes in found.values()), found
    assert sorted(len(led[m.node]) for m in members) == [1, 1, 1]
    for m in members:  # the lease check agrees with the turn, on every wallet
        assert {w for w in WALLETS if m.leads(w)} == led[m.node]


@pytest.mark.postgres
def test_a_joining_daemon_gets_its_share(make: tuple[Make, Clock]) -> None:
    new, _ = make
    first = new("a:1")
    assert turn([first]) == {"a:1": set(WALLETS)}
    second = new("b:2")
    with capture_logs() as logs:
        led = turn([first, second], rounds=3)
    found = owners(led)
    assert all(len(nodes) == 1 for nodes in found.values()), found
    assert led["b:2"]  # it has its share
    assert {len(led["a:1"]), len(led["b:2"])} == {1, 2}
    events = [e["event"] for e in logs]
    assert "wallet_released" in events
    assert "wallet_acquired" in events


@pytest.mark.postgres
def test_a_wallet_under_way_is_handed_over_only_when_idle(make: tuple[Make, Clock]) -> None:
    new, _ = make
    first = new("a:1")
    turn([first])
    second = new("b:2")
    names = ["a:1", "b:2"]
    held = dict.fromkeys(WALLETS, "a:1")
    theirs = {w for w, n in assign(WALLETS, names, held).items() if n == "b:2"}
    assert len(theirs) == 1
    assert second.rebalance(WALLETS, names) == set()  # present; every wallet is held
    busy = True
    led = first.rebalance(WALLETS, names, busy=lambda w: busy)
    assert led == set(WALLETS) - theirs  # no more fires for theirs at once
    assert not any(first.leads(w) for w in theirs)
    assert second.rebalance(WALLETS, names) == set()  # still locked: a run is under way
    busy = False
    first.rebalance(WALLETS, names, busy=lambda w: busy)
    assert second.rebalance(WALLETS, names) == theirs


@pytest.mark.postgres
def test_takeover_after_a_connection_is_closed(pg_url: str, make: tuple[Make, Clock]) -> None:
    new, _ = make
    members = [new("a:1"), new("b:2"), new("c:3")]
    led = turn(members)
    victim = next(m for m in members if led[m.node])
    lost = led[victim.node]
    pid = victim.backend_pid
    assert pid is not None
    terminate(pg_url, pid)  # as a kill -9 of its daemon: the server drops its locks
    with capture_logs() as logs:
        assert not any(victim.leads(w) for w in lost)  # the very next lease check
    assert "leader_lost" in [e["event"] for e in logs]
    survivors = [m for m in members if m is not victim]
    # the victim's heartbeat row is still there (a candidate), its presence lock is not
    led = {}
    for m in survivors:
        led[m.node] = m.rebalance(WALLETS, [n.node for n in members])
    found = owners(led)
    assert all(len(nodes) == 1 for nodes in found.values()), found


class Ticks:
    """A monotonic clock that gives `times` in turn (then the last one again)."""

    def __init__(self, *times: float) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0) if len(self.times) > 1 else self.times[0]


@pytest.mark.postgres
def test_a_lease_check_begun_after_a_fire_asked_answers_for_it(
    pg_url: str, pg_engine: Engine
) -> None:
    """A fire that asked before a check began takes that check's answer (the session
    was alive after the fire asked); one that asks after it makes its own, and sees
    a lost session at once."""
    # clock reads: the turn's; the first check (asked 10, began 11); a fire that
    # asked at 10.5; a fire that asks at 12 and its check
    one = PgShardLeadership(pg_engine, "a:1", monotonic=Ticks(1.0, 10.0, 11.0, 10.5, 12.0, 13.0))
    try:
        assert one.rebalance(["alice"], ["a:1"]) == {"alice"}
        assert one.leads("alice")  # checked: began at 11
        pid = one.backend_pid
        assert pid is not None
        terminate(pg_url, pid)  # the session is gone from now on
        assert one.leads("alice")  # asked at 10.5, before the check of 11: its answer
        with capture_logs() as logs:
            assert not one.leads("alice")  # asked at 12: a check of its own, which fails
        assert "leader_lost" in [e["event"] for e in logs]
    finally:
        one.release()


@pytest.mark.postgres
def test_an_orphan_is_adopted_after_its_grace(pg_engine: Engine, make: tuple[Make, Clock]) -> None:
    new, clock = make
    first = new("a:1")
    names = ["a:1", "ghost:9"]
    # the ghost is live (its presence lock held) but never takes its wallets
    ghost = PgShardLeadership(pg_engine, "ghost:9")
    try:
        ghost.rebalance([], names)
        theirs = {w for w, n in assign(WALLETS, names).items() if n == "ghost:9"}
        assert first.rebalance(WALLETS, names) == set(WALLETS) - theirs
        clock.now += 1.0
        assert first.rebalance(WALLETS, names) == set(WALLETS) - theirs
        clock.now += 3.0
        assert first.rebalance(WALLETS, names) == set(WALLETS)
    finally:
        ghost.release()


@pytest.mark.postgres
def test_a_wallet_no_longer_configured_is_let_go(make: tuple[Make, Clock]) -> None:
    new, _ = make
    first = new("a:1")
    assert first.rebalance(WALLETS, []) == set(WALLETS)
    assert first.rebalance(["alice"], []) == {"alice"}
    second = new("b:2")
    second.rebalance([], [])
    assert second.rebalance(["bob"], ["b:2"]) == {"bob"}  # free at once


@pytest.mark.postgres
def test_release_frees_every_wallet(make: tuple[Make, Clock]) -> None:
    new, _ = make
    first, second = new("a:1"), new("b:2")
    assert first.rebalance(WALLETS, ["a:1"]) == set(WALLETS)
    first.release()
    assert first.led() == set()
    # the server ends the first's locks with its session, a moment after release()
    assert wait_until(lambda: second.rebalance(WALLETS, ["a:1", "b:2"]) == set(WALLETS), 15)


@pytest.mark.postgres
def test_a_stale_session_of_the_same_node_is_ended(pg_url: str, make: tuple[Make, Clock]) -> None:
    """The server may keep a session we gave up on (a network blip): `host:pid` names
    one process, so a session holding our presence lock is our own stale one; it is
    ended, and with it the wallet locks it held."""
    new, _ = make
    dsn = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as stale:  # as our earlier session
        stale.execute("SELECT pg_advisory_lock(%s)", (node_key("a:1"),))
        stale.execute("SELECT pg_advisory_lock(%s)", (wallet_key("alice"),))
        with capture_logs() as logs:
            assert new("a:1").rebalance(WALLETS, []) == set(WALLETS)
        assert "stale_session_ended" in [e["event"] for e in logs]
        with pytest.raises(psycopg.OperationalError):
            stale.execute("SELECT 1")


def _beat(engine: Engine, node: str) -> None:
    from datetime import UTC, datetime

    from jupcron.store import control
    from jupcron.store.control import NodeBeat
    from jupcron.store.engine import begin

    now = datetime.now(UTC)
    with begin(engine) as conn:
        control.beat(conn, NodeBeat(node=node, role="standby", role_since=now, started_at=now,
                                    last_beat=now, dry_run=False, kill_switch=None,
                                    version="t"))  # fmt: skip


@pytest.mark.postgres
def test_wallet_leads_read_the_candidates_from_the_heartbeats(pg_engine: Engine) -> None:
    """The daemon's side: the heartbeat rows name the candidates; a joining daemon
    gets its share, and a wallet with a fire under way waits for its end."""
    from jupcron.service.wallet_leads import WalletLeads

    first = WalletLeads(PgShardLeadership(pg_engine, "a:1"), pg_engine)
    second = WalletLeads(PgShardLeadership(pg_engine, "b:2"), pg_engine)
    try:
        _beat(pg_engine, "a:1")
        change = first.turn(WALLETS, now=True)
        assert change is not None
        assert change.gained == set(WALLETS)
        assert first.turn(WALLETS) is None  # not due yet
        held = dict.fromkeys(WALLETS, "a:1")
        theirs = {w for w, n in assign(WALLETS, ["a:1", "b:2"], held).items() if n == "b:2"}
        wallet = sorted(theirs)[0]
        _beat(pg_engine, "b:2")
        assert second.turn(WALLETS, now=True) is None  # present, nothing free yet
        with first.firing(wallet):
            change = first.turn(WALLETS, now=True)
            assert change is not None
            assert change.lost == theirs  # no more fires of them here
            assert not first.leads(wallet)
            change = second.turn(WALLETS, now=True)  # the idle ones come at once
            assert (change.gained if change else set()) == theirs - {wallet}
            assert wallet not in second.led  # still locked: a fire under way
        first.turn(WALLETS, now=True)  # idle now: unlocked
        change = second.turn(WALLETS, now=True)
        assert change is not None
        assert change.gained == {wallet}
        assert first.led | second.led == set(WALLETS)
        assert not first.led & second.led
    finally:
        first.release()
        second.release()
