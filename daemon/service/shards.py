"""Leadership per wallet (DESIGN §6): N daemons on one PostgreSQL share the wallets.

PostgreSQL (`PgShardLeadership`): one dedicated connection per daemon (outside
the pool; autocommit, TCP keepalives and a TCP user timeout) holds

* a *presence* lock, key ``node:<host:pid>``: the daemon is alive and taking part
  (a kill -9 closes the socket and the server drops every lock of it at once);
* one session advisory lock per wallet it leads, key ``wallet:<name>``.

The session ends after `IDLE_SESSION_TIMEOUT` idle (PostgreSQL 14+): a live daemon
uses it every turn, a frozen one (SIGSTOP) would otherwise keep its wallets for as
long as it is frozen. When it resumes its next statement fails (every wallet dropped)
and the runs it was driving are fenced by their ``claimed_by`` compare-and-set.

A rebalance turn (the daemon's loop, every second or so) reads `pg_locks` once:
the live nodes are the candidates (the heartbeat table's rows) whose presence
lock is held; each wallet's holder is the node whose session holds its lock.
`jupcron.service.assign.plan_turn` then says what to take and what to hand over.
A wallet handed over first stops firing (`leads` says False), and is unlocked
once the daemon has no run of it under way (``busy``), so its new leader never
finds one of ours in flight. `leads(wallet)` is the lease check before every
fire: one round trip on the session that holds the wallet's lock. A session
advisory lock is only ever released by its own session (we unlock only wallets
we stop leading, which `leads` already answers False for) or by the end of the
session; so the session answering at all proves it still holds the lock, and
the check is a bare ``SELECT 1`` (a query of `pg_locks` cost the server ten times
as much, on every fire), sent through libpq (`jupcron.store.pgdirect.alive`). A
fire takes the answer of a check that began after it asked, when there is one:
that check proved the session alive at a moment later than the fire's own request,
as a check of its own would have (the fires of a burst, queued behind one check,
share the next instead of making one each). Any error drops the connection and
with it every wallet.

SQLite keeps the single-daemon model: one file lock (`SqliteFileLeadership`,
daemon/service/leading.py), and its holder leads every wallet.

The unique (plan, scheduled_for) claim stays the last line of defence: two
daemons both believing they lead a wallet for a moment still fire a slot once.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import structlog
from sqlalchemy import Engine

from jupcron.errors import StoreBusyError
from jupcron.service.assign import plan_turn

log = structlog.get_logger(__name__)

ORPHAN_AFTER = 3.0  # seconds a wallet's lock stays free before a non-assignee takes it
# seconds our leadership session may sit idle before the server ends it (and every lock
# in it): a live daemon runs a statement on it every turn (about a second); a frozen one
# (SIGSTOP, a main loop stuck without systemd's watchdog) loses its wallets after this,
# like WatchdogSec=60 in the shipped unit. ``None``: no limit.
IDLE_SESSION_TIMEOUT: float | None = 60.0
IDLE_SESSION_SINCE = 140000  # the server version that knows idle_session_timeout
SERVER_KEEPALIVE = "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2"
# libpq settings for the leadership connection: notice a silent peer within ~10 s
PG_CONNECT_PARAMS: dict[str, Any] = {
    "autocommit": True,
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 2,
    "tcp_user_timeout": 8000,
}

# the leadership sessions of this process say so in their application name: a session
# holding our node's presence lock under another process's name is another daemon's
# (two hosts of one name whose daemons have one pid: cloned machines, containers),
# never a stale one of ours to end
APPLICATION = "jupcron-shards"
SESSION_NAME = f"{APPLICATION} {uuid.uuid4().hex[:16]}"

_LOCKS_SQL = (
    "SELECT classid::bigint, objid::bigint, pid FROM pg_locks "
    "WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``."""
    digest = hashlib.sha256(f"jupcron-leader:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def wallet_key(shard: str) -> int:
    return lock_key(f"wallet:{shard}")


def node_key(node: str) -> int:
    return lock_key(f"node:{node}")


def split_key(key: int) -> tuple[int, int]:
    """A bigint advisory key as `pg_locks` shows it: (classid, objid), high and low 32 bits."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


def _another_process(application: str | None) -> bool:
    """A session that another process's leadership opened (not one of ours)."""
    return (application or "").startswith(APPLICATION) and application != SESSION_NAME


class ShardLeadership(Protocol):
    """Which wallets this daemon leads. All methods are safe from any thread."""

    node: str

    def rebalance(
        self,
        shards: Sequence[str],
        candidates: Iterable[str],
        busy: Callable[[str], bool] = ...,
    ) -> frozenset[str]:
        """One turn: take and hand over wallets; the wallets led after it. A store
        error raises `StoreBusyError`."""
        ...

    def leads(self, shard: str) -> bool:
        """The lease check before a fire of a plan of ``shard``: re-verified."""
        ...

    def led(self) -> frozenset[str]:
        """The wallets led now (as of the last turn; no round trip)."""
        ...

    def release(self) -> None:
        """Step down from every wallet (idempotent)."""
        ...


class PgShardLeadership:
    """Per-wallet session advisory locks on one dedicated connection."""

    def __init__(
        self,
        engine: Engine,
        node: str,
        *,
        orphan_after: float = ORPHAN_AFTER,
        idle_timeout: float | None = IDLE_SESSION_TIMEOUT,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.node = node
        self.orphan_after = orphan_after
        self.idle_timeout = idle_timeout
        self._monotonic = monotonic
        self._dbapi_error: type[Exception] = engine.dialect.loaded_dbapi.Error
        # imported here: a daemon on SQLite never loads the PostgreSQL driver
        from jupcron.store.pgdirect import alive

        self._alive = alive
        self._conn: Any = None
        self._held: set[str] = set()
        self._leaving: set[str] = set()  # handed over: no more fires, unlocked when idle
        self._free_since: dict[str, float] = {}
        # when the last lease check that answered began (our monotonic clock)
        self._answered = float("-inf")
        self._lock = threading.RLock()

    # -- connection ----------------------------------------------------------
    def _connect(self) -> None:
        cargs, cparams = self.engine.dialect.create_connect_args(self.engine.url)
        # the server, too, gives up on a silent peer in seconds (not the OS's 2 hours):
        # a partitioned daemon's session, and every wallet lock in it, goes soon
        options = f"{cparams.get('options', '')} {SERVER_KEEPALIVE}".strip()
        params = {**cparams, **PG_CONNECT_PARAMS, "application_name": SESSION_NAME,
                  "options": options}  # fmt: skip
        conn = self.engine.dialect.connect(*cargs, **params)
        try:
            self._limit_idle(conn)
            if not self._present(conn):
                raise StoreBusyError(f"another session already takes part as node {self.node}")
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._answered = float("-inf")  # a check of this session, not of the one before

    def _limit_idle(self, conn: Any) -> None:
        """Ask the server to end this session once idle for `idle_timeout`: keepalives
        cannot tell a frozen daemon (its kernel still answers them) from a live one,
        and a frozen holder would keep its wallets, unfired, for as long as it is frozen.
        A `SET` after connecting, not a startup option: a server older than 14 refuses
        an unknown parameter there (the connection fails); on one we do without."""
        if self.idle_timeout is None or conn.info.server_version < IDLE_SESSION_SINCE:
            return
        millis = max(1, round(self.idle_timeout * 1000))
        conn.execute(f"SET idle_session_timeout = {millis}")

    def _present(self, conn: Any) -> bool:
        """Take our presence lock. A session that holds it already is an earlier one of
        this very process (``host:pid`` names one process), which we gave up on while
        the server kept it: it is ended, and its wallet locks with it. One that another
        process's leadership opened (its application name says so) is another daemon
        under our node name: we take no part (`StoreBusyError`), and leave it be; ending
        it took every wallet from that daemon mid-fire, and it then ended ours."""
        key = node_key(self.node)
        if conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            return True
        classid, objid = split_key(key)
        stale = conn.execute(
            "SELECT l.pid, a.application_name FROM pg_locks l "
            "LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND l.granted AND l.objsubid = 1 AND l.classid = %s AND l.objid = %s "
            # an advisory lock is one database's: the same key held in another (another
            # deployment on this server) is not in our way, nor ours to end
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (classid, objid),
        ).fetchall()
        if any(_another_process(name) for _, name in stale):
            raise StoreBusyError(
                f"another process already takes part as node {self.node}: another daemon "
                "with this host name and pid (cloned machines, containers: give each host "
                "a host name of its own), or one just gone whose session the server still "
                "keeps (it drops it within seconds)"
            )
        for pid, _ in stale:
            log.warning("stale_session_ended", node=self.node, backend_pid=pid)
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(50):  # the ended session's locks go as it exits (milliseconds)
            if conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                return True
            time.sleep(0.02)
        return False

    def _lost(self, exc: Exception) -> StoreBusyError:
        """The connection failed: every lock went with it."""
        if self._held:
            log.warning("leader_lost", node=self.node, wallets=sorted(self._held),
                        reason="connection lost", error=str(exc))  # fmt: skip
        self._held.clear()
        self._leaving.clear()
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        return StoreBusyError(f"wallet leadership: database unavailable: {exc}")

    @property
    def backend_pid(self) -> int | None:
        """The server process holding our locks (for operators and tests)."""
        with self._lock:
            if self._conn is None:
                return None
            try:
                return int(self._conn.execute("SELECT pg_backend_pid()").fetchone()[0])
            except self._dbapi_error:
                return None

    # -- a turn --------------------------------------------------------------
    def _locks(self) -> dict[tuple[int, int], int]:
        rows = self._conn.execute(_LOCKS_SQL).fetchall()
        return {(int(c), int(o)): int(pid) for c, o, pid in rows}

    def rebalance(
        self,
        shards: Sequence[str],
        candidates: Iterable[str],
        busy: Callable[[str], bool] = lambda shard: False,
    ) -> frozenset[str]:
        with self._lock:
            try:
                if self._conn is None:
                    self._connect()
                return self._turn(list(dict.fromkeys(shards)), set(candidates), busy)
            except self._dbapi_error as exc:
                raise self._lost(exc) from exc

    def _turn(
        self, shards: list[str], candidates: set[str], busy: Callable[[str], bool]
    ) -> frozenset[str]:
        locks = self._locks()
        node_of_pid: dict[int, str] = {}
        for node in candidates | {self.node}:
            pid = locks.get(split_key(node_key(node)))
            if pid is not None:
                node_of_pid[pid] = node
        live = set(node_of_pid.values()) | {self.node}
        holders: dict[str, str] = {}
        for shard in shards:
            pid = locks.get(split_key(wallet_key(shard)))
            if pid is not None:  # a session no candidate owns (an older daemon): not free
                holders[shard] = node_of_pid.get(pid, f"pid {pid}")
        now = self._monotonic()
        for shard in shards:
            if shard in holders:
                self._free_since.pop(shard, None)
            else:
                self._free_since.setdefault(shard, now)
        free_for = {s: now - t for s, t in self._free_since.items()}
        turn = plan_turn(self.node, shards, live, holders, free_for, orphan_after=self.orphan_after)
        gone = self._held - set(shards)  # a wallet no longer configured
        for shard in sorted((turn.hand_over | gone) & self._held):
            if shard not in self._leaving:
                log.info("wallet_handing_over", node=self.node, wallet=shard)
            self._leaving.add(shard)
        for shard in sorted(self._leaving):
            if not busy(shard):
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (wallet_key(shard),))
                self._held.discard(shard)
                self._leaving.discard(shard)
                log.info("wallet_released", node=self.node, wallet=shard)
        for shard in sorted(turn.take):
            row = self._conn.execute(
                "SELECT pg_try_advisory_lock(%s)", (wallet_key(shard),)
            ).fetchone()
            if row and row[0]:
                self._held.add(shard)
                self._free_since.pop(shard, None)
                log.info("wallet_acquired", node=self.node, wallet=shard,
                         orphan=shard in turn.orphans)  # fmt: skip
        return frozenset(self._held - self._leaving)

    # -- lease ---------------------------------------------------------------
    def leads(self, shard: str) -> bool:
        asked = self._monotonic()
        with self._lock:
            if shard not in self._held or shard in self._leaving or self._conn is None:
                return False
            if self._answered > asked:  # a check begun since we asked: as fresh as ours
                return True
            began = self._monotonic()
            try:
                self._alive(self._conn)
            except self._dbapi_error as exc:
                self._lost(exc)
                return False
            self._answered = began
            return True

    def led(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._held - self._leaving)

    def release(self) -> None:
        with self._lock:
            if self._held:
                log.info("wallets_released", node=self.node, wallets=sorted(self._held))
            self._held.clear()
            self._leaving.clear()
            conn, self._conn = self._conn, None
            if conn is not None:  # closing the session drops every lock it holds
                with contextlib.suppress(Exception):
                    conn.close()
