"""`jupcron run`: the daemon's main loop.

One thread (the main one) owns the loop: it waits on the signal inbox, pings
the watchdog while the store and scheduler are healthy, keeps leadership
(PostgreSQL advisory lock; a file lock on SQLite) and starts or stops the
scheduler as leadership comes and goes. Runs happen on the scheduler's
worker threads; recovery on a thread of its own.

    start ─► store reachable, migrated ─► plans counted ─► READY=1
          ─► leader? recover in-flight runs, start the scheduler : stand by
    config file changed ─► re-read it (daemon/service/reload.py), in effect for the runs
                           that start from then on; a config that does not load is refused whole
    SIGHUP ─► the same for the config, then plans.dir (each kept as it was on an error)
    SIGTERM/SIGINT ─► STOPPING=1, no new fires, in-flight runs get
                      runner.shutdown_timeout to reach a stored state, exit 0
    FatalError in a run (the API refused our key) ─► stop as above, said (daemon_fatal),
                      exit 78 (`jupcron run`: EXIT_FATAL, not restarted by the unit)
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import structlog
from sqlalchemy.exc import SQLAlchemyError

from jupcron import __version__, failpoints
from jupcron.app import Runtime, Store, build_runtime, open_store
from jupcron.config import Config, mask_url
from jupcron.domain import RunStatus
from jupcron.errors import FatalError, JupcronError, StoreBusyError
from jupcron.follower import FollowerLoop
from jupcron.logs import configure_logging
from jupcron.plans.apply import apply_paths, files_seen, files_vs_store
from jupcron.runner.core import node_name
from jupcron.runner.outcome import RunListener, RunOutcome
from jupcron.runner.recovery import recover
from jupcron.scheduling.scheduler import Scheduler
from jupcron.service.alerts import AlertEvent, Alerts, alerts_from_config
from jupcron.service.dependencies import Dependencies
from jupcron.service.heartbeat import Heartbeat
from jupcron.service.leader import Leadership, leadership_for
from jupcron.service.listeners import AttemptMetrics, MetricsListener, WebhookListener
from jupcron.service.metrics import Metrics, MetricsServer, serve_metrics
from jupcron.service.notify import Notifier, watchdog_interval
from jupcron.service.reload import ConfigFile
from jupcron.service.runway import RunwayWatch
from jupcron.service.signals import SignalEvent, SignalInbox
from jupcron.service.watchdog import Watchdog
from jupcron.service.webhook import Notification, WebhookNotifier
from jupcron.store import plans as store_plans
from jupcron.store import runs
from jupcron.store.records import PlanRecord
from jupcron.web.activity import Activity
from jupcron.web.serve import WebServer, check_web, start_web
from jupcron.web.views import LiveState

log = structlog.get_logger(__name__)

TICK = 1.0  # seconds between loop turns when nothing else is due
STORE_WAIT_MAX = 10.0  # seconds between tries to reach the database at start
FILES_EVERY = 5.0  # seconds between two reads of plans.dir for the page


class Daemon:
    def __init__(
        self,
        config: Config,
        *,
        config_path: str | None = None,
        env: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = config  # the config in effect: replaced whole by a reload, never mutated
        self.config_path = config_path or config.source or None
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.config_file = (
            ConfigFile(Path(self.config_path), self.env, config) if self.config_path else None
        )
        self.transport = transport
        self.notifier = Notifier(self.env)
        self.metrics = Metrics()
        self.inbox = SignalInbox()
        self.leader = False
        self.runtime: Runtime | None = None
        self.scheduler: Scheduler | None = None
        self.leadership: Leadership | None = None
        self.metrics_server: MetricsServer | None = None
        self.web_server: WebServer | None = None
        self.activity = Activity()
        self._started_at = datetime.now(UTC)
        self._role_since = self._started_at
        self.webhook: WebhookNotifier | None = None
        self.alerts: Alerts | None = None
        self._fatal_reason = ""
        self.dependencies: Dependencies | None = None  # API key, RPC, wallet: asked at start
        # (when read, plan files state, what it was read from: store revision and file stats)
        self._files: tuple[float, dict[str, Any], object] | None = None
        self._recovery: threading.Thread | None = None
        self.follower: FollowerLoop | None = None
        self.runway: RunwayWatch | None = None
        self.heartbeat: Heartbeat | None = None
        self._last_recovery = 0.0
        self._store_ok = True
        self._status = ""
        self._plan_count = 0
        self._last_run = ""
        self._started = False  # daemon_started was logged
        self._exit_code = 0

    # ---- lifecycle --------------------------------------------------------------

    def run(self) -> int:
        configure_logging(self.config.logging.level, self.config.logging.format, stream=sys.stdout)
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
            self._fatal_reason = self._fatal_reason or reason
            raise
        finally:
            self._shutdown()
        return self._exit_code

    def _start(self) -> None:
        config = self.config
        # first: a failed start is said too
        self.alerts = alerts_from_config(config.notify, on_result=self.metrics.record_notifications)
        if self.alerts is not None:
            self.alerts.start()
        check_web(config)  # a bad web.* (the token file, say) stops the start here
        store = self._open_store()  # refuses an unmigrated database
        if store is None:
            return  # stopped while waiting for the database
        self.leadership = leadership_for(config.database.url, store.engine)
        listeners: list[RunListener] = [MetricsListener(self.metrics), self, self.activity]
        if self.alerts is not None:
            listeners.append(self.alerts)
        if config.notify.webhook_url:
            self.webhook = WebhookNotifier(
                config.notify.webhook_url, allow_insecure_http=config.notify.allow_insecure_http
            ).start()
            listeners.append(WebhookListener(self.webhook))
        self.runtime = build_runtime(
            config,
            transport=self.transport,
            listeners=listeners,
            store=store,
            on_attempt=self._attempt_observer(),
        )
        self._probe_at_start()
        # the lock before the listener: a second daemon on one SQLite file is told who
        # holds the file, not that the metrics port is taken
        lead = self._acquire()
        if config.metrics.listen and config.metrics.listen != config.web.listen:
            self.metrics_server = serve_metrics(self.metrics, config.metrics.listen, self.healthy)
        self.web_server = start_web(
            config, metrics=self.metrics, health=self.healthy,
            live=self.live_state, activity=self.activity,
        )  # fmt: skip
        self._count_plans()
        self._started = True
        log.info("daemon_started", plans=self._plan_count, wallet=self.runtime.wallet.address,
                 database=mask_url(config.database.url), swap_api=config.api.swap_api,
                 dry_run=config.safety.dry_run, config=config.digest)  # fmt: skip
        degraded = f"; degraded: {'; '.join(self._degraded())}" if self._degraded() else ""
        wallet = self.runtime.wallet.address
        self._alert(AlertEvent.DAEMON_START, f"daemon started on {node_name()}: "
                    f"{self._plan_count} plans, wallet {wallet}{degraded}")  # fmt: skip
        if config.runner.default_grace is not None:
            log.warning("config_key_ignored", key="runner.default_grace",
                        use="a plan's schedule.grace")  # fmt: skip
        if config.api.swap_api == "ultra-v1":  # it works, but upstream no longer maintains it
            log.warning("swap_api_unmaintained", use="swap-v2", see="docs/products.md")
        self._lead_or_wait(lead)
        self.heartbeat = Heartbeat(
            store.engine, node=self.runtime.runner.node, started_at=self._started_at,
            version=__version__,
        )  # fmt: skip
        self._beat()
        self.notifier.ready(self._status_text())

    def _probe_at_start(self) -> None:
        """The API key and the RPC node, asked once before anything is scheduled: a key
        the API refuses is fatal now (not at the first run, a week later for a weekly
        plan); an API or RPC node that does not answer, or a wallet without SOL, leaves
        the daemon running, degraded (said in the log, the STATUS= line, the start alert
        and the heartbeat: `jupcron status` and the page), asked again until it works
        (daemon/service/dependencies.py)."""
        assert self.runtime is not None
        self.dependencies = Dependencies(
            lambda: self.config, str(self.runtime.wallet.address),
            transport=self.transport, on_fatal=self._fatal,
        )  # fmt: skip
        self.dependencies.at_start()

    def _degraded(self) -> list[str]:
        return self.dependencies.degraded() if self.dependencies is not None else []

    def _open_store(self) -> Store | None:
        """The store, waiting while it cannot be reached (at boot PostgreSQL may come up
        after us); ``None`` if a stop is requested meanwhile. Any other store problem
        (not migrated, say) ends the start at once."""
        delay = 1.0
        while True:
            try:
                return open_store(self.config)
            except StoreBusyError as exc:
                log.warning("store_unavailable_at_start", error=str(exc), retry_in=delay)
                self.notifier.status(f"waiting for the database: {exc}")
                self.inbox.wait(delay)
                if self.inbox.stop_requested:
                    return None
                delay = min(delay * 2, STORE_WAIT_MAX)

    def _loop(self) -> None:
        watchdog = Watchdog(self.notifier, watchdog_interval(self.env), health=self.healthy)
        while not self.inbox.stop_requested:
            watchdog.tick()
            self._keep_leadership()
            self._maybe_recover()
            self._update_status()
            self._follow_config()
            if self.dependencies is not None:
                self.dependencies.maybe_recheck()
            self._beat()
            for event in self.inbox.wait(min(TICK, watchdog.seconds_until_due(default=TICK))):
                if event is SignalEvent.RELOAD:
                    self.reload()

    def _shutdown(self) -> None:
        started = self._started  # a start that failed has nothing to stop: no stop events
        if started:
            log.info("daemon_stopping")
        self.notifier.stopping("stopping")
        deadline = time.monotonic() + self.config.runner.shutdown_timeout
        if self.scheduler is not None:
            self.scheduler.stop(wait=False)
        self._stop_follower()
        self._stop_runway()
        self._wait_for_runs(deadline)
        if self.heartbeat is not None:
            self.heartbeat.stop()
        if self.leadership is not None:
            self.leadership.release()
        if self.metrics_server is not None:
            self.metrics_server.stop()
        if self.web_server is not None:
            self.web_server.stop()
        if self.webhook is not None:
            self.webhook.stop(timeout=max(0.0, deadline - time.monotonic()))
        if self.alerts is not None:
            if self._fatal_reason:
                self._alert(AlertEvent.DAEMON_FATAL,
                            f"daemon on {node_name()} stopped: {self._fatal_reason}")  # fmt: skip
            elif started:
                self._alert(AlertEvent.DAEMON_STOP, f"daemon on {node_name()} stopped")
            self.alerts.stop(timeout=max(5.0, deadline - time.monotonic()))
        if self.runtime is not None:
            self.runtime.close()
        self.inbox.close()
        self.notifier.close()
        if started:
            log.info("daemon_stopped")

    def _wait_for_runs(self, deadline: float) -> None:
        if self.runtime is None:
            return
        runner = self.runtime.runner
        scheduler = self.scheduler

        def busy() -> int:
            # a fire the scheduler handed over may not have claimed its run yet
            return runner.active_count() + (scheduler.busy() if scheduler is not None else 0)

        while busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        if busy():
            # every step is already stored; recovery settles them at the next start
            log.warning("runs_left_in_flight", count=runner.active_count())
            sys.stdout.flush()
            os._exit(0)

    # ---- health and status ------------------------------------------------------

    def healthy(self) -> bool:
        if not self._store_ok:
            return False
        if self.leader and self.scheduler is not None:
            return self.scheduler.healthy()
        return True

    def _attempt_observer(self) -> Callable[[Any], None]:
        """Every API attempt of every run: into the metrics and the page's activity."""
        to_metrics = AttemptMetrics(self.metrics)

        def observe(attempt: Any) -> None:
            to_metrics(attempt)
            self.activity.attempt(attempt)

        return observe

    def live_state(self) -> LiveState:
        """What only this process knows, for the status page (its role, dry run and
        kill switch the page reads from this daemon's heartbeat, as `jupcron status`)."""
        if self.runtime is None:
            return LiveState(node=node_name(), rate_limit=0.0, wallet="")
        runtime = self.runtime
        return LiveState(
            node=runtime.runner.node, rate_limit=runtime.api.pacer.rate,
            wallet=str(runtime.wallet.address), plan_files=self._plan_files(),
        )  # fmt: skip

    def _plan_files(self) -> dict[str, Any] | None:
        """plans.dir against the store, read at most every `FILES_EVERY` seconds (a page
        refreshes every few seconds; reading every plan file that often is waste)."""
        assert self.runtime is not None
        now = time.monotonic()
        if self._files is None or now - self._files[0] >= FILES_EVERY:
            folder = self.config.plans.dir
            try:
                with self.runtime.store.factory() as session:
                    # read the files again only when they or the store changed: with
                    # 100,000 plans a read is seconds of CPU
                    seen = (store_plans.revision(session), files_seen(folder))
                    if self._files is not None and self._files[2] == seen:
                        self._files = (now, self._files[1], seen)
                        return self._files[1]
                    state = files_vs_store(session, folder).as_json()
            except (JupcronError, SQLAlchemyError, OSError) as exc:
                state = {"folder": str(folder), "in_sync": False, "diff": [],
                         "problem": str(exc)}  # fmt: skip
                seen = None
            self._files = (now, state, seen)
        return self._files[1]

    def _beat(self) -> None:
        """The heartbeat row `jupcron status` reads, with the config in effect now."""
        if self.heartbeat is not None:
            degraded = "; ".join(self._degraded()) or None
            self.heartbeat.tick(leader=self.leader, role_since=self._role_since,
                                config=self.config, degraded=degraded)  # fmt: skip

    def _count_plans(self) -> None:
        assert self.runtime is not None
        try:
            with self.runtime.store.factory() as session:
                self._plan_count = store_plans.count_enabled(session)
                in_doubt = session.scalar(runs.count_status_stmt(RunStatus.IN_DOUBT)) or 0
            self._store_ok = True
        except JupcronError:
            self._store_ok = False
            return
        except SQLAlchemyError as exc:  # a dropped connection surfaces as a driver error
            log.warning("store_unavailable", error=str(exc))
            self._store_ok = False
            return
        self.metrics.set_plans(self._plan_count)
        self.metrics.set_in_doubt(int(in_doubt))

    def _status_text(self) -> str:
        role = "leader" if self.leader else "standby"
        text = f"{role}, {self._plan_count} plans"
        if self._degraded():
            text += f", degraded ({'; '.join(self._degraded())})"
        return f"{text}, last run: {self._last_run}" if self._last_run else text

    def run_finished(self, outcome: RunOutcome) -> None:
        """A run listener: the last run, for the STATUS line."""
        when = outcome.scheduled_for.strftime("%Y-%m-%d %H:%M:%SZ")
        self._last_run = f"{outcome.plan_name} {outcome.status} ({when})"

    def _update_status(self) -> None:
        self._count_plans()
        text = self._status_text()
        if not self._store_ok:
            text += ", store unreachable"
        if text != self._status:
            self._status = text
            self.notifier.status(text)

    # ---- leadership ---------------------------------------------------------------

    def _try_lead(self) -> None:
        self._lead_or_wait(self._acquire())

    def _acquire(self) -> bool:
        """One try at the leader lock (SQLite: a `StoreError` if another daemon has it)."""
        assert self.leadership is not None
        try:
            return self.leadership.acquire(block=False)
        except StoreBusyError as exc:
            log.warning("leader_election_failed", error=str(exc))
            return False

    def _lead_or_wait(self, got: bool) -> None:
        if got:
            self._become_leader()
        else:
            log.info("standby_waiting")

    def _keep_leadership(self) -> None:
        assert self.leadership is not None
        if self.leader:
            if not self.leadership.is_leader():
                self._step_down()
        else:
            self._try_lead()

    def _become_leader(self) -> None:
        assert self.runtime is not None
        self.leader = True
        self._role_since = datetime.now(UTC)
        self.metrics.set_leader(True)
        log.info("became_leader")
        self._alert(AlertEvent.LEADER_CHANGE, f"{node_name()} became the leader")
        self._start_recovery(startup=True)
        self.scheduler = Scheduler(
            self.runtime.store.factory, self._fire,
            workers=self.config.runner.workers, on_misfire=self._misfired,
            runs=self.runtime.runs,
        )  # fmt: skip
        self.scheduler.start()
        self._start_follower()
        self._start_runway()

    def _start_follower(self) -> None:
        """The order follower runs beside the leader's scheduler, on spare API capacity."""
        assert self.runtime is not None
        follow = self.config.follow
        if not follow.enabled:
            return
        rt = self.runtime
        self.follower = FollowerLoop(
            rt.store.engine, rt.api, rt.wallet.address, interval=follow.interval,
            clock=lambda: datetime.now(UTC), rpc=rt.rpc, trigger_v2=rt.runner.ports.trigger_v2,
        ).start()  # fmt: skip

    def _start_runway(self) -> None:
        """The runway watch (daemon/service/runway.py) beside the leader's scheduler."""
        assert self.runtime is not None
        if not self.config.runway.enabled:
            return
        rt = self.runtime
        self.runway = RunwayWatch(
            rt.store.engine, rt.api, str(rt.wallet.address), config=lambda: self.config,
            gauges=self.metrics.runway, alert=self._alert,
        ).start()  # fmt: skip

    def _stop_runway(self) -> None:
        if self.runway is not None:
            self.runway.stop()
            self.runway = None
            self.metrics.runway.keep_only(())  # the new leader shows them

    def _stop_follower(self) -> None:
        if self.follower is not None:
            self.follower.stop()
            self.follower = None

    def _step_down(self) -> None:
        log.warning("stepping_down")
        self._alert(AlertEvent.LEADER_CHANGE, f"{node_name()} stepped down (no longer leader)")
        self.leader = False
        self._role_since = datetime.now(UTC)
        self.metrics.set_leader(False)
        self._stop_follower()
        self._stop_runway()
        if self.scheduler is not None:
            self.scheduler.stop(wait=False)
            self.scheduler = None

    def _fire(self, plan: PlanRecord, scheduled_for: datetime) -> None:
        """The scheduler's callback: check the lease, then run."""
        assert self.runtime is not None
        assert self.leadership is not None
        if not self.leadership.is_leader():
            log.warning("fire_refused_not_leader", plan=plan.name,
                        scheduled_for=scheduled_for.isoformat())  # fmt: skip
            return
        try:
            self.runtime.runner.fire(plan, scheduled_for)
        except FatalError as exc:
            self._fatal(exc)

    def _fatal(self, exc: FatalError) -> None:
        """A run met a problem only a human can fix (a refused API key): stop, exit 1.
        The run stays where its row says; recovery carries it on after the fix."""
        log.error("daemon_fatal", error=str(exc), error_type=type(exc).__name__)
        self._fatal_reason = self._fatal_reason or str(exc)
        self._exit_code = 1
        self.inbox.request_stop()

    def _alert(self, event: AlertEvent, text: str) -> None:
        if self.alerts is not None:
            self.alerts.note(event, text)

    def _misfired(self, plan: PlanRecord, slots: list[datetime]) -> None:
        """Missed slots were recorded as skipped: count them and tell the webhook."""
        now = datetime.now(UTC)
        for slot in slots:
            self.metrics.record_misfire(str(plan.kind))
            if self.webhook is not None:
                self.webhook.send(Notification.misfire(plan.name, slot, now, kind=str(plan.kind)))
            when = slot.strftime("%Y-%m-%d %H:%M:%SZ")
            self._alert(AlertEvent.MISFIRE, f"plan {plan.name} missed its {when} slot")

    # ---- recovery -----------------------------------------------------------------

    def _maybe_recover(self) -> None:
        interval = self.config.runner.recovery_interval
        if self.leader and time.monotonic() - self._last_recovery >= interval:
            self._start_recovery(startup=False)

    def _start_recovery(self, *, startup: bool) -> None:
        if self._recovery is not None and self._recovery.is_alive():
            return
        assert self.runtime is not None
        runner = self.runtime.runner
        self._last_recovery = time.monotonic()

        def work() -> None:
            try:
                outcomes = recover(runner, startup=startup)
            except FatalError as exc:
                self._fatal(exc)
                return
            except Exception:
                log.exception("recovery_failed")
                return
            if outcomes:
                log.info("recovery_done", runs=len(outcomes))

        self._recovery = threading.Thread(target=work, name="recovery", daemon=True)
        self._recovery.start()

    # ---- reload ---------------------------------------------------------------------

    def reload(self) -> bool:
        """SIGHUP: re-read the config and the plans folder; keep the old on any error."""
        self.notifier.reloading()
        try:
            ok = self._reload()
        finally:
            self.notifier.ready(self._status_text())
        return ok

    def _reload(self) -> bool:
        assert self.runtime is not None
        config = self.config
        if self.config_file is not None:
            read = self.config_file.read(self.config, "signal")
            if read is None:
                return False
            config = self._use_config(read, "signal")
        folder = config.plans.dir
        if folder.is_dir():
            try:
                diff, _ = apply_paths(self.runtime.store.factory, [folder], now=datetime.now(UTC))
            except JupcronError as exc:
                log.error("reload_failed", what="plans", error=str(exc))
                return False
            log.info("plans_applied", diff=diff.lines())
        if self.scheduler is not None:
            self.scheduler.reload()
        log.info("reloaded")
        return True

    def _follow_config(self) -> None:
        """A loop turn: a config file whose content changed is re-read, as on SIGHUP."""
        if self.config_file is not None:
            config = self.config_file.changed(self.config)
            if config is not None:
                self._use_config(config, "file")
        if self.web_server is not None:
            self.web_server.follow(self.config)  # the token file, watched by itself

    def _use_config(self, config: Config, trigger: str) -> Config:
        """`config` in effect for every run that starts from now on (a run under way
        finishes under the config it started with); one reference, replaced whole."""
        assert self.runtime is not None
        old = self.config
        self.runtime.runner.reconfigure(config)
        self.config = config
        if self.config_file is not None:
            self.config_file.in_effect(old, config, trigger)
        if self.web_server is not None:
            self.web_server.apply(config, trigger)  # the token read again: a new one ends sessions
        return config
