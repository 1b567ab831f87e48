"""`jupcron run`: the daemon's life, from start to exit.

One thread (the main one) owns the loop: it waits on the signal inbox, pings
the watchdog while the store and scheduler are healthy, keeps leadership
(daemon/service/leading.py) and follows the config (daemon/service/reload.py).
Runs happen on the scheduler's worker threads; recovery on a thread of its own.
What is built from the config is built in daemon/service/wiring.py.

    start ─► store reachable, migrated ─► plans counted ─► READY=1
          ─► leader? recover in-flight runs, start the scheduler : stand by
    config file changed ─► re-read it (daemon/service/reload.py), in effect for the runs
                           that start from then on; a config that does not load is refused whole
    SIGHUP ─► the same for the config, then plans.dir (each kept as it was on an error):
              the plans on a thread of their own, the loop pinging and beating meanwhile;
              one more SIGHUP during it is one more reload after it
    SIGTERM/SIGINT ─► STOPPING=1, no new fires, in-flight runs get
                      runner.shutdown_timeout to reach a stored state, exit 0
    FatalError in a run (the API refused our key) ─► stop as above, said (daemon_fatal),
                      exit 78 (`jupcron run`: EXIT_FATAL, not restarted by the unit)
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import httpx
import structlog

from jupcron import __version__, failpoints
from jupcron.chain.wallets import wallets_text
from jupcron.config import Config, mask_url
from jupcron.errors import FatalError, JupcronError, StoreBusyError
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import PageFactory
from jupcron.logs import configure_logging
from jupcron.runner.core import node_name
from jupcron.scheduling.zones import TZDATA_VERSION
from jupcron.service.alerts import AlertEvent
from jupcron.service.duties import LeaderDuties, Scope
from jupcron.service.heartbeat import Heartbeat
from jupcron.service.leader import Leadership, leadership_for
from jupcron.service.leading import Leading, one_unit
from jupcron.service.notify import Notifier, watchdog_interval
from jupcron.service.reload import ConfigFile, Reload
from jupcron.service.shards import PgShardLeadership
from jupcron.service.signals import SignalEvent, SignalInbox
from jupcron.service.status import Status
from jupcron.service.wallet_leading import WalletLeading
from jupcron.service.wallet_leads import WalletLeads
from jupcron.service.watchdog import Watchdog
from jupcron.service.wiring import Wiring
from jupcron.store.handle import Store, open_store

log = structlog.get_logger(__name__)

EXIT_FATAL = 78  # a fatal stop's status, as `jupcron run` exits (daemon/cli/run.py)
TICK = 1.0  # seconds between loop turns when nothing else is due
SETTLE_EVERY = 600.0  # seconds between re-freezes of the heap (what reloads left is freed)
STORE_WAIT_MAX = 10.0  # seconds between tries to reach the database at start


class Daemon:
    def __init__(
        self,
        config: Config,
        *,
        config_path: str | None = None,
        env: Mapping[str, str] | None = None,
        page: PageFactory,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        config_path = config_path or config.source or None
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.notifier = Notifier(self.env)
        self.metrics = Metrics()
        self.inbox = SignalInbox()
        self.wiring = Wiring(metrics=self.metrics, page=page, transport=transport)
        self.status = Status(config=self.current, metrics=self.metrics, notifier=self.notifier,
                             degraded=self.wiring.degraded, alert=self.wiring.alert,
                             store_down_after=config.notify.store_down_after)  # fmt: skip
        config_file = ConfigFile(Path(config_path), self.env, config) if config_path else None
        self.reloads = Reload(
            config, config_file, notifier=self.notifier, status_text=self._status_text,
            plans_changed=self._plans_changed, wake=self.inbox.wake,
        )  # fmt: skip
        self.leading: Leading | WalletLeading | None = None  # once the store answers
        self._started_at = datetime.now(UTC)
        self._fatal_reason = ""
        self._started = False  # daemon_started was logged
        self._exit_code = 0
        self._crashed = False  # a bug ended the daemon (exit 1, restarted)

    def current(self) -> Config:
        """The config in effect: replaced whole by a reload, never mutated."""
        return self.reloads.config

    @property
    def leader(self) -> bool:
        return self.leading is not None and self.leading.leader

    # ---- start --------------------------------------------------------------------

    def run(self) -> int:
        logging = self.current().logging
        configure_logging(logging.level, logging.format, stream=sys.stdout)
        failpoints.load_from_env()
        self.inbox.install()
        try:
            self._start()
            self._loop()
        except JupcronError as exc:  # a start that cannot go on (a bad key, say): said, then up
            if not self._fatal_reason:
                log.error("daemon_fatal", error=str(exc), error_type=type(exc).__name__,
                          started=self._started)  # fmt: skip
            self._fatal_reason = self._fatal_reason or str(exc)
            raise
        except Exception as exc:  # a bug: said as a fatal stop (not a plain stop), then up
            reason = f"unexpected {type(exc).__name__}: {exc}"
            log.exception("daemon_crashed", error=reason)
            self._crashed = True
            self._fatal_reason = self._fatal_reason or reason
            raise
        finally:
            self._shutdown()
        return self._exit_code

    def _start(self) -> None:
        config = self.current()
        wiring = self.wiring
        wiring.start_alerts(config)  # first: a failed start is said too
        store = self._open_store()  # refuses an unmigrated database
        if store is None:
            return  # stopped while waiting for the database
        runtime = wiring.build_runtime(config, store, self.status)
        self.status.runtime = self.reloads.runtime = runtime
        self.leading = self._leading(config, store)
        wiring.probe(self.current, self._fatal)
        # the lock before the listener: a second daemon on one SQLite file is told who
        # holds the file, not that the metrics port is taken
        take = self._first_try(self.leading)
        wiring.start_servers(config, health=self.healthy, live=self.status.live_state)
        self.reloads.page = wiring.web_server
        self.status.count_plans()
        self._started = True
        plans = self.status.plan_count
        unloaded = runtime.warn_unknown_wallets()  # their plans' runs are rejected
        addresses = runtime.addresses()
        log.info("daemon_started", plans=plans, wallets=addresses,
                 database=mask_url(config.database.url), swap_api=config.api.swap_api,
                 dry_run=config.safety.dry_run, config=config.digest,
                 tzdata=TZDATA_VERSION)  # fmt: skip
        degraded = wiring.degraded()
        said = f"; degraded: {'; '.join(degraded)}" if degraded else ""
        if unloaded:  # said now, not at the first rejected run (a weekly plan's: days away)
            said += (f"; plans name wallets not configured here: {', '.join(unloaded)} "
                     "(their runs are rejected, nothing signed; name them under wallets: "
                     "and restart)")  # fmt: skip
        wiring.alert(AlertEvent.DAEMON_START, f"daemon started on {node_name()}: "
                     f"{plans} plans, {wallets_text(addresses)}{said}")  # fmt: skip
        if config.runner.default_grace is not None:
            log.warning("config_key_ignored", key="runner.default_grace",
                        use="a plan's schedule.grace")  # fmt: skip
        if config.api.swap_api == "ultra-v1":  # it works, but upstream no longer maintains it
            log.warning("swap_api_unmaintained", use="swap-v2", see="docs/products.md")
        take()
        self.status.heartbeat = Heartbeat(
            store.engine, node=runtime.runner.node, started_at=self._started_at,
            version=__version__,
        )  # fmt: skip
        self._beat()
        self.notifier.ready(self._status_text())
        settle_heap()

    def _leading(self, config: Config, store: Store) -> Leading | WalletLeading:
        """PostgreSQL: a share of the wallets, each under its own lock, rebalanced with
        the other daemons; SQLite: one file lock, every wallet (the one-daemon model)."""
        runtime = self.wiring.runtime
        assert runtime is not None
        if store.engine.dialect.name == "postgresql":
            leads = WalletLeads(PgShardLeadership(store.engine, runtime.runner.node), store.engine)
            return WalletLeading(
                # the wallets whose keys it loaded at start (a reload does not load keys)
                leads, self._scoped_duties, wallets=lambda: tuple(runtime.wallets),
                set_leader=self.metrics.set_leader, alert=self.wiring.alert,
                since=self._started_at,
            )  # fmt: skip
        lock = leadership_for(config.database.url)
        return Leading(one_unit(lock, self._duties), metrics=self.metrics,
                       alert=self.wiring.alert, since=self._started_at)  # fmt: skip

    @staticmethod
    def _first_try(leading: Leading | WalletLeading) -> Callable[[], None]:
        """One try at the lock(s) now (SQLite says here who holds the file); the call
        returned starts leading what was got."""
        if isinstance(leading, WalletLeading):
            first = leading.try_all()
            return lambda: leading.take(first)
        tries = leading.try_all()
        return lambda: leading.take(tries)

    def _scoped_duties(self, scope: Scope) -> LeaderDuties:
        """What this node runs for the wallets it leads (each fire checks its wallet)."""
        assert self.wiring.runtime is not None
        return LeaderDuties(
            self.wiring.runtime, config=self.current, still_leader=lambda: False,
            metrics=self.metrics, alert=self.wiring.alert, on_fatal=self._fatal,
            webhook=self.wiring.webhook, scope=scope,
        )  # fmt: skip

    def _duties(self, lock: Leadership) -> LeaderDuties:
        """What the leader of `lock` runs (its scheduler checks `lock` before each fire)."""
        assert self.wiring.runtime is not None
        return LeaderDuties(
            self.wiring.runtime, config=self.current, still_leader=lock.is_leader,
            metrics=self.metrics, alert=self.wiring.alert, on_fatal=self._fatal,
            webhook=self.wiring.webhook,
        )  # fmt: skip

    def _open_store(self) -> Store | None:
        """The store, waiting while it cannot be reached (at boot PostgreSQL may come up
        after us); ``None`` if a stop is requested meanwhile. Any other store problem
        (not migrated, say) ends the start at once."""
        delay = 1.0
        outage = self.status.outage  # said once it lasts (store_down), and its end
        while True:
            try:
                store = open_store(self.current())
            except StoreBusyError as exc:
                outage.failed(str(exc))
                log.warning("store_unavailable_at_start", error=str(exc), retry_in=delay)
                self.notifier.status(f"waiting for the database: {exc}")
                self.inbox.wait(delay)
                if self.inbox.stop_requested:
                    return None
                delay = min(delay * 2, STORE_WAIT_MAX)
            else:
                outage.ok()
                return store

    # ---- the loop -----------------------------------------------------------------

    def _loop(self) -> None:
        watchdog = Watchdog(self.notifier, watchdog_interval(self.env), health=self.healthy)
        settle_at = time.monotonic() + SETTLE_EVERY
        while not self.inbox.stop_requested:
            watchdog.tick()
            if time.monotonic() >= settle_at:  # cycles a reload left among frozen objects
                settle_heap()
                settle_at = time.monotonic() + SETTLE_EVERY
            if self.leading is not None:
                self.leading.keep()
            self.status.update(self.leader)
            self.reloads.follow()
            self.reloads.poll()  # a SIGHUP's plans part, done on its thread: in effect
            if self.wiring.dependencies is not None:
                self.wiring.dependencies.maybe_recheck()
            self._beat()
            for event in self.inbox.wait(min(TICK, watchdog.seconds_until_due(default=TICK))):
                if event is SignalEvent.RELOAD:
                    self.reload()

    def reload(self) -> None:
        """SIGHUP: re-read the config and the plans folder; keep the old on any error.
        The plans are applied on a thread (`Reload.request`): at 100,000 plans that is
        tens of seconds, and the watchdog (WatchdogSec=60) and the heartbeat are the
        loop's."""
        self.reloads.request()

    def healthy(self) -> bool:
        if not self.status.store_ok:
            return False
        return self.leading.healthy() if self.leading is not None else True

    def _plans_changed(self) -> None:
        if self.leading is not None:
            self.leading.reload()

    def _status_text(self) -> str:
        return self.status.text(self.leader)

    def _beat(self) -> None:
        leading = self.leading
        if leading is None:
            return
        if isinstance(leading, WalletLeading):
            led = leading.led
        else:  # SQLite: the one daemon leads every wallet
            led = frozenset(self.current().wallet_names()) if leading.leader else frozenset()
        self.status.beat(leader=self.leader, role_since=leading.role_since, wallets=led)

    def _fatal(self, exc: FatalError) -> None:
        """A run met a problem only a human can fix (a refused API key): stop, exit 1.
        The run stays where its row says; recovery carries it on after the fix."""
        log.error("daemon_fatal", error=str(exc), error_type=type(exc).__name__)
        self._fatal_reason = self._fatal_reason or str(exc)
        self._exit_code = 1
        self.inbox.request_stop()

    # ---- stop ---------------------------------------------------------------------

    def _shutdown(self) -> None:
        started = self._started  # a start that failed has nothing to stop: no stop events
        if started:
            log.info("daemon_stopping")
        self.notifier.stopping("stopping")
        deadline = time.monotonic() + self.current().runner.shutdown_timeout
        wiring = self.wiring
        if self.leading is not None:
            self.leading.shutdown()
        reloaded = self.reloads.stop(0.0)  # a reload under way gives up: told now
        left = self._wait_for_runs(deadline)
        if not reloaded:
            reloaded = self.reloads.stop(max(0.0, deadline - time.monotonic()))
            if not reloaded:  # its transaction is the database's to roll back at our exit
                log.warning("reload_left_unfinished")
        if self.status.heartbeat is not None:
            self.status.heartbeat.stop()
        if self.leading is not None and not left:  # held by the runs left until the exit
            self.leading.release()
        wiring.stop_servers()
        if wiring.webhook is not None:
            wiring.webhook.stop(timeout=max(0.0, deadline - time.monotonic()))
        if wiring.alerts is not None:
            said = (f"; {left} run(s) left in flight (recovery settles them at the next start)"
                    if left else "")  # fmt: skip
            if self._fatal_reason:
                why = f"{self._fatal_reason}{said}"
                wiring.alert(AlertEvent.DAEMON_FATAL, f"daemon on {node_name()} stopped: {why}")
            elif started:
                wiring.alert(AlertEvent.DAEMON_STOP, f"daemon on {node_name()} stopped{said}")
            wiring.alerts.stop(timeout=max(5.0, deadline - time.monotonic()))
        if wiring.runtime is not None and not left and reloaded:  # (still in use)
            self.status.close()
            wiring.runtime.close()
        gc.unfreeze()
        self.inbox.close()
        self.notifier.close()
        if started:
            log.info("daemon_stopped")
        if left or not reloaded:
            # the worker threads still driving them cannot be joined: end here, said and
            # with the status the stop earned (not 0 for a fatal one)
            sys.stdout.flush()
            os._exit(1 if self._crashed else EXIT_FATAL if self._fatal_reason else 0)

    def _wait_for_runs(self, deadline: float) -> int:
        """Wait for the runs in flight until `deadline`; how many are left."""
        if self.wiring.runtime is None:
            return 0
        runner = self.wiring.runtime.runner
        leading = self.leading

        def busy() -> int:
            # a fire the scheduler handed over may not have claimed its run yet
            return runner.active_count() + (leading.busy() if leading is not None else 0)

        while busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        left = busy()
        if left:
            # every step is already stored; recovery settles them at the next start
            log.warning("runs_left_in_flight", count=runner.active_count())
        return left


def settle_heap() -> None:
    """What the start built lives as long as the daemon: collected once, then kept out
    of the cycle collector's full passes (`gc.freeze`), which each run's allocations
    trigger and which walked all of it (a few tenths of a millisecond a run). Objects
    made later are collected as before; `gc.unfreeze` at shutdown. Called again every
    `SETTLE_EVERY` seconds: what was frozen is unfrozen and collected first, so the
    cycles of a config or plans reload (old objects that were frozen) are freed too,
    at the cost of one full pass (~0.1 s of CPU) each time."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
