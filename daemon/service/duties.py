"""The leader's duties for one led unit: what runs while it holds the lock.

    start (became leader) ─► recovery of in-flight runs (a thread of its own),
                             the scheduler, the order follower, the runway watch
    wallets gained ─► recovery of their in-flight runs
    each loop turn ─► recovery again every `runner.recovery_interval` seconds, and
                      once more when the runs found fresh at a start or a gain
                      have gone stale

Recovery takes only runs untouched for `STALE_AFTER` seconds (their driver is
gone), except at the start of the single daemon (SQLite: it took the one lock at
its own start, so no other daemon can be driving): a daemon that gains a unit
while others run (a standby taking over, a wallet handed over or taken from a
daemon that died or lost its connection) leaves the runs another daemon may still
be driving until they go stale, and looks again right after.
    step down ─► the follower, the runway watch, then the scheduler stop
    shutdown ─► the scheduler, then the follower and the runway watch stop; the
                scheduler is kept, so the runs it handed over are still counted

One object per led unit for the whole life of the daemon (a recovery still
running from an earlier term is not started twice). Before every fire the lease
is checked again (`still_leader`); a `FatalError` from a run or from recovery
goes to `on_fatal`.

With a `Scope` (leadership per wallet on PostgreSQL, daemon/service/wallet_leading.py)
the scheduler and recovery see only the plans of the wallets this node leads, the
lease check before a fire is that of the plan's wallet, and each fire is counted
as under way for its wallet (a wallet is handed over only when none is).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Protocol

import structlog

from jupcron.app import Runtime
from jupcron.config import Config
from jupcron.errors import FatalError, NotLeadingError
from jupcron.follower import FollowerLoop
from jupcron.follower.loop import Notify, describe
from jupcron.listen.metrics import Metrics
from jupcron.runner.recovery import STALE_AFTER, recover
from jupcron.scheduling.scheduler import Scheduler
from jupcron.service.alerts import AlertEvent
from jupcron.service.runway import Alert, RunwayWatch
from jupcron.service.webhook import Notification, WebhookEvent, WebhookNotifier
from jupcron.store.notices import OrderNotice
from jupcron.store.records import PlanRecord

log = structlog.get_logger(__name__)


class Scope(Protocol):
    """Which plans this node runs, when it leads only some of them (per wallet)."""

    def includes(self, plan: PlanRecord) -> bool:
        """The plan is this node's (its scheduler and recovery take it)."""
        ...

    def leads(self, plan: PlanRecord) -> bool:
        """The lease check before a fire of ``plan``: re-verified."""
        ...

    def firing(self, plan: PlanRecord) -> AbstractContextManager[None]:
        """A fire of ``plan`` under way (its wallet is not handed over meanwhile)."""
        ...

    def owns(self, wallet: str) -> bool:
        """The runs of ``wallet`` are this node's to recover."""
        ...


def order_notices(alert: Alert, webhook: WebhookNotifier | None) -> Notify:
    """The follower's port to the operator: each held, overdue or unaccounted order
    (handed over once, daemon/follower/loop.py) to `notify.urls` and the webhook, as an
    event of its own (`notify.events` filters them)."""

    def tell(notices: Sequence[OrderNotice]) -> None:
        now = datetime.now(UTC)
        for notice in notices:
            line = describe(notice)
            alert(AlertEvent(notice.step), line)
            if webhook is not None:
                webhook.send(
                    Notification.for_order(
                        WebhookEvent(notice.step),
                        notice.plan,
                        notice.order,
                        notice.run_id,
                        line,
                        now,
                    )
                )

    return tell


class LeaderDuties:
    def __init__(
        self,
        runtime: Runtime,
        *,
        config: Callable[[], Config],
        still_leader: Callable[[], bool],
        metrics: Metrics,
        alert: Alert,
        on_fatal: Callable[[FatalError], None],
        webhook: WebhookNotifier | None = None,
        scope: Scope | None = None,
        stale_after: float = STALE_AFTER,
    ) -> None:
        """`stale_after`: seconds untouched after which recovery takes another's run."""
        self.runtime = runtime
        self.stale_after = stale_after
        self.scope = scope
        self.config = config  # the config in effect now (a reload replaces it)
        self.still_leader = still_leader
        self.metrics = metrics
        self.alert = alert
        self.on_fatal = on_fatal
        self.webhook = webhook
        self.scheduler: Scheduler | None = None
        self.follower: FollowerLoop | None = None
        self.runway: RunwayWatch | None = None
        self._recovery: threading.Thread | None = None
        self._last_recovery = 0.0
        self._recheck: float | None = None  # monotonic: a pass once fresh runs went stale

    # ---- a term -------------------------------------------------------------------

    def start(self, *, beside: bool = True, startup: bool = False) -> None:
        """A term starts; ``beside``: with the follower and the runway watch too;
        ``startup``: the single daemon at its own start (fresh runs recovered too)."""
        self.recover_gained(startup=startup)
        self.scheduler = Scheduler(
            self.runtime.store.factory, self._fire,
            workers=self.config().runner.workers, on_misfire=self._misfired,
            runs=self.runtime.runs, include=self.scope.includes if self.scope else None,
        )  # fmt: skip
        self.scheduler.start()
        if beside:
            self.beside(True)

    def beside(self, on: bool) -> None:
        """The follower and the runway watch, started (once) or stopped."""
        if on:
            if self.follower is None:
                self._start_follower()
            if self.runway is None:
                self._start_runway()
        else:
            self._stop_follower()
            self._stop_runway()

    def recovering(self) -> bool:
        """A recovery is driving runs right now."""
        return self._recovery is not None and self._recovery.is_alive()

    def step_down(self) -> None:
        self._stop_follower()
        self._stop_runway()
        if self.scheduler is not None:
            self.scheduler.stop(wait=False)
            self.scheduler = None

    def shutdown(self) -> None:
        """No new fires; the scheduler stays for `busy` (the fires it handed over)."""
        if self.scheduler is not None:
            self.scheduler.stop(wait=False)
        self._stop_follower()
        self._stop_runway()

    def healthy(self) -> bool:
        return self.scheduler.healthy() if self.scheduler is not None else True

    def busy(self) -> int:
        """Fires the scheduler handed over that may not have claimed their run yet."""
        return self.scheduler.busy() if self.scheduler is not None else 0

    def reload(self) -> None:
        """The plans read again (a store down: the scheduler's watch job tries again)."""
        if self.scheduler is not None:
            self.scheduler.refresh()

    # ---- the parts ----------------------------------------------------------------

    def _start_follower(self) -> None:
        """The order follower runs beside the leader's scheduler, on spare API capacity."""
        follow = self.config().follow
        if not follow.enabled:
            return
        rt = self.runtime
        self.follower = FollowerLoop(
            rt.store.engine, rt.api, rt.addresses(), interval=follow.interval,
            clock=lambda: datetime.now(UTC), rpc=rt.rpc, trigger_v2=rt.runner.sessions,
            notify=order_notices(self.alert, self.webhook),
        ).start()  # fmt: skip

    def _start_runway(self) -> None:
        """The runway watch (daemon/service/runway.py) beside the leader's scheduler."""
        if not self.config().runway.enabled:
            return
        rt = self.runtime
        self.runway = RunwayWatch(
            rt.store.engine, rt.api, rt.addresses(), config=self.config,
            gauges=self.metrics.runway, alert=self.alert,
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

    def _fire(self, plan: PlanRecord, scheduled_for: datetime) -> None:
        """The scheduler's callback: check the lease, then run."""
        if self.scope is not None:
            with self.scope.firing(plan):  # counted first: a hand-over now waits for it
                if self.scope.leads(plan):
                    self._run(plan, scheduled_for)
                    return
        elif self.still_leader():
            self._run(plan, scheduled_for)
            return
        log.warning("fire_refused_not_leader", plan=plan.name,
                    scheduled_for=scheduled_for.isoformat())  # fmt: skip
        raise NotLeadingError(f"not the leader of wallet {plan.wallet}")

    def _run(self, plan: PlanRecord, scheduled_for: datetime) -> None:
        try:
            self.runtime.runner.fire(plan, scheduled_for)
        except FatalError as exc:
            self.on_fatal(exc)

    def _misfired(self, plan: PlanRecord, slots: list[datetime]) -> None:
        """Missed slots were recorded as skipped: count them, and say them once (a
        catch-up after a long stop may find a thousand of one plan)."""
        if not slots:
            return
        now = datetime.now(UTC)
        for _ in slots:
            self.metrics.record_misfire(str(plan.kind))
        first, last = min(slots), max(slots)
        if self.webhook is not None:
            self.webhook.send(Notification.misfire(plan.name, last, now, kind=str(plan.kind),
                                                   missed=len(slots)))  # fmt: skip
        when = last.strftime("%Y-%m-%d %H:%M:%SZ")
        since = first.strftime("%Y-%m-%d %H:%M:%SZ")
        what = f"its {when} slot" if len(slots) == 1 else f"{len(slots)} slots, {since} to {when}"
        self.alert(AlertEvent.MISFIRE, f"plan {plan.name} missed {what}")

    # ---- recovery -----------------------------------------------------------------

    def maybe_recover(self) -> None:
        """A loop turn while leader: recovery again once `runner.recovery_interval`
        passed, or once the runs found fresh at a start or a gain have gone stale."""
        now = time.monotonic()
        recheck = self._recheck is not None and now >= self._recheck
        due = now - self._last_recovery >= self.config().runner.recovery_interval
        if (recheck or due) and self.start_recovery(startup=False) and recheck:
            self._recheck = None

    def recover_gained(self, *, startup: bool = False) -> None:
        """Recovery for a unit just led (a term's start, wallets gained), and again once
        the runs it left as fresh (perhaps another daemon's) have gone stale."""
        self.start_recovery(startup=startup)
        if not startup:
            self._recheck = time.monotonic() + self.stale_after + 1.0

    def start_recovery(self, *, startup: bool) -> bool:
        """A recovery pass in a thread of its own; False if one is still running."""
        if self._recovery is not None and self._recovery.is_alive():
            return False
        runner = self.runtime.runner
        self._last_recovery = time.monotonic()

        def work() -> None:
            try:
                only = self.scope.owns if self.scope is not None else None
                outcomes = recover(runner, startup=startup, stale_after=self.stale_after, only=only)
            except FatalError as exc:
                self.on_fatal(exc)
                return
            except Exception:
                log.exception("recovery_failed")
                return
            if outcomes:
                log.info("recovery_done", runs=len(outcomes))

        self._recovery = threading.Thread(target=work, name="recovery", daemon=True)
        self._recovery.start()
        return True
