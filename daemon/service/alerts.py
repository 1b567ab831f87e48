"""Notifications where operators read them: Apprise URLs (``notify.urls``).

Apprise speaks Telegram, email, Slack, Discord, ntfy, Matrix, plain JSON
webhooks and a hundred more, each configured by one URL; the URLs carry the
channel's token or password, so they are secrets: `SecretStr` in the config
(masked in every repr, dump and log), and only their scheme is ever shown
(`jupcron.service.apprise_channel.channel_of`).

What is said (``notify.events``, all by default): a run that ends ``failed``,
``rejected`` or ``in_doubt``; ``skipped`` slots of a plan, debounced (the
first skip says why, later ones of the same streak are counted and summed up
every ``notify.skip_summary`` seconds, when the streak ends or at the stop),
slots skipped by an operator's pause (not at first: the operator knows; once a
day, `PAUSE_REMIND`, while it goes on, one line per pause: a forgotten ``pause
--all`` must not stop every run in silence), a slot misfired, a manual fire
(``jupcron fire``), the daemon's start, stop and fatal stop, a change of leader,
and a database that has not answered for `STORE_ALERT_AFTER` seconds
(daemon/service/status.py), and its return; and an order of ours whose money waits
(``order_held``, ``order_overdue``, ``order_unaccounted``: once each, from the
follower's events, daemon/follower/loop.py).

Rate limit: alerts are gathered for ``notify.batch`` seconds after the first
one, and messages go out at most once per ``notify.min_interval`` seconds, so a
burst of failures is one message listing them. Delivery is on one background
thread with a bounded queue; `stop` delivers what is pending before it returns
(a fatal stop is said before the process ends). An alert the full queue cannot
take (the channel hung in a send while a burst came) is not silent: logged
(``alert_dropped``), counted as not delivered (``on_result``: the metrics), and
the next message says how many of which events were lost.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

import structlog

from jupcron.domain import RunStatus
from jupcron.logs import mask_secrets
from jupcron.runner.outcome import RunOutcome
from jupcron.service.apprise_channel import Sender, apprise_sender
from jupcron.service.webhook import NOTIFY_STATUSES

if TYPE_CHECKING:
    from jupcron.config import NotifyConfig

log = structlog.get_logger(__name__)

TEXT_LIMIT = 300  # characters of one alert's reason
# an order's notice is our own line (daemon/follower/loop.py: `describe`), and its end is
# how to get the money back (the cancel plan's order and family): cut at 300 with a
# plan's long name, the recipe was lost; these get room for names of 100 characters
NOTICE_LIMIT = 600
MESSAGE_LIMIT = 30  # alerts listed in one message; the rest counted
PAUSE_REMIND = 86_400.0  # seconds between two reminders of a pause that goes on
ALL_PAUSED = "*"  # the key of every plan's pause (as the store's scope)


class AlertEvent(StrEnum):
    """What `notify.events` may name (a contract once landed)."""

    FAILED = "failed"
    REJECTED = "rejected"
    IN_DOUBT = "in_doubt"
    SKIPPED = "skipped"
    MISFIRE = "misfire"
    MANUAL_FIRE = "manual_fire"
    DAEMON_START = "daemon_start"
    DAEMON_STOP = "daemon_stop"
    DAEMON_FATAL = "daemon_fatal"
    LEADER_CHANGE = "leader_change"
    LOW_BALANCE = "low_balance"
    STORE_DOWN = "store_down"
    DEPENDENCY_DOWN = "dependency_down"
    # money waiting in an order (the followers' events, daemon/follower/loop.py)
    ORDER_HELD = "order_held"
    ORDER_OVERDUE = "order_overdue"
    ORDER_UNACCOUNTED = "order_unaccounted"


# the run statuses that are told: the webhook's, each under its own name
RUN_EVENTS: dict[RunStatus, AlertEvent] = {s: AlertEvent(s) for s in NOTIFY_STATUSES}
# money waiting in an order of ours: the followers' notices
ORDER_NOTICES = frozenset({AlertEvent.ORDER_HELD, AlertEvent.ORDER_OVERDUE,
                           AlertEvent.ORDER_UNACCOUNTED})  # fmt: skip
# Apprise's notify types: how the channel colours or flags the message
SEVERE = frozenset({AlertEvent.FAILED, AlertEvent.IN_DOUBT, AlertEvent.DAEMON_FATAL,
                    AlertEvent.REJECTED, AlertEvent.LOW_BALANCE,
                    AlertEvent.STORE_DOWN, AlertEvent.DEPENDENCY_DOWN,
                    AlertEvent.ORDER_HELD, AlertEvent.ORDER_OVERDUE,
                    AlertEvent.ORDER_UNACCOUNTED})  # fmt: skip


@dataclass(frozen=True)
class Alert:
    event: AlertEvent
    text: str  # one line, public facts only (plan, run id, status, reason)
    at: datetime = field(default_factory=lambda: datetime.now(UTC))


def one_line(text: str | None, limit: int = TEXT_LIMIT) -> str:
    """A reason as one masked line of at most `limit` characters."""
    if not text:
        return ""
    flat = " ".join(str(mask_secrets(None, "", {"t": text})["t"]).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Alerts:
    """Gathers alerts, debounces skips and sends messages from one thread.

    ``sender`` is the seam (Apprise in production, a list in unit tests);
    ``clock`` is monotonic seconds. Call `start`, then the ``note_*`` methods
    from any thread, `stop` on shutdown.
    """

    def __init__(
        self,
        sender: Sender,
        *,
        events: Sequence[str] = (),
        batch: float = 10.0,
        min_interval: float = 60.0,
        skip_summary: float = 3600.0,
        source: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        queue_size: int = 1000,
        on_result: Callable[[list[str], bool], None] | None = None,
    ) -> None:
        self.sender = sender
        self.on_result = on_result  # each message's alert events, and whether it went out
        self.events = {AlertEvent(e) for e in events} if events else set(AlertEvent)
        self.batch = batch
        self.min_interval = min_interval
        self.skip_summary = skip_summary
        self.source = source or f"jupcron@{socket.gethostname()}"
        self.clock = clock
        self._queue: queue.Queue[Alert | None] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._streaks: dict[str, _Streak] = {}
        self._pauses: dict[str, _Streak] = {}  # pause scope (a plan, or every plan's) -> skips
        self._last_sent = float("-inf")
        self.messages = 0
        self.dropped = 0
        self._lost: dict[AlertEvent, int] = {}  # dropped since the last message, by event

    def __repr__(self) -> str:
        return f"Alerts(events={sorted(self.events)!r})"

    # -- what happened ------------------------------------------------------------
    def note(self, event: AlertEvent, text: str) -> None:
        if event not in self.events:
            return
        try:
            limit = NOTICE_LIMIT if event in ORDER_NOTICES else TEXT_LIMIT
            self._queue.put_nowait(Alert(event, one_line(text, limit)))
        except queue.Full:  # the queue is full: the next message comes, and says it
            with self._lock:
                self.dropped += 1
                self._lost[event] = self._lost.get(event, 0) + 1
            log.warning("alert_dropped", alert=str(event), reason="queue full")
            self._counted([str(event)], False)

    def note_run(self, outcome: RunOutcome) -> None:
        """A run listener's view: failures at once, skips debounced per plan."""
        when = outcome.scheduled_for.strftime("%Y-%m-%d %H:%M:%SZ")
        plan = outcome.plan_name
        paused = _pause_scope(outcome)
        self._pause_goes_on(plan, paused, when, outcome.error)
        if outcome.status is RunStatus.SKIPPED and paused is None:
            self._skipped(plan, when, outcome.error)
            return
        self._streak_over(plan)
        event = RUN_EVENTS.get(outcome.status)
        if event is not None:
            reason = f": {outcome.error}" if outcome.error else ""
            self.note(event, f"plan {plan} run {outcome.run_id} ({when}) {outcome.status}{reason}")

    def run_finished(self, outcome: RunOutcome) -> None:  # the RunListener protocol
        self.note_run(outcome)

    def _skipped(self, plan: str, when: str, reason: str | None) -> None:
        now = self.clock()
        with self._lock:
            streak = self._streaks.get(plan)
            if streak is None:
                self._streaks[plan] = _Streak(first=when, summed_at=now)
                first = True
            else:
                streak.count += 1
                streak.last, streak.reason = when, reason
                first = False
                due = now - streak.summed_at >= self.skip_summary
                if due:
                    text = streak.summary(plan)
                    streak.count, streak.summed_at = 0, now
        if first:
            self.note(AlertEvent.SKIPPED, f"plan {plan} slot {when} skipped: {reason or '?'}")
        elif due:
            self.note(AlertEvent.SKIPPED, text)

    def _pause_goes_on(self, plan: str, scope: str | None, when: str, reason: str | None) -> None:
        """A slot of `plan` skipped under the pause `scope` (None: not paused, which
        ends the count of its pause without a word: resumed); reminded every
        `PAUSE_REMIND` seconds from the first skip, one line for every plan's pause."""
        now = self.clock()
        with self._lock:
            if scope != plan:
                self._pauses.pop(plan, None)
            if scope != ALL_PAUSED:
                self._pauses.pop(ALL_PAUSED, None)
            if scope is None:
                return
            pause = self._pauses.get(scope)
            if pause is None:
                self._pauses[scope] = _Streak(first=when, summed_at=now, count=1)
                return
            pause.count += 1
            pause.last, pause.reason = when, reason
            if now - pause.summed_at < PAUSE_REMIND:
                return
            pause.summed_at = now
            what = "every plan" if scope == ALL_PAUSED else f"plan {scope}"
            text = (f"{what}: {pause.count} slot(s) skipped since {pause.first} and still "
                    f"paused, the last {pause.last}: {reason or '?'}")  # fmt: skip
        self.note(AlertEvent.SKIPPED, text)

    def _streak_over(self, plan: str, why: str = "the streak has ended") -> None:
        with self._lock:
            streak = self._streaks.pop(plan, None)
        if streak is not None and streak.count:
            self.note(AlertEvent.SKIPPED, f"{streak.summary(plan)} ({why})")

    # -- the thread -----------------------------------------------------------------
    def start(self) -> Alerts:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="alerts", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Send what is pending now (no more waiting), the skip streaks still going
        summed up in it, then end the thread."""
        if self._thread is None:
            return
        with self._lock:
            plans = list(self._streaks)
        for plan in plans:
            self._streak_over(plan, "counted until the daemon stopped")
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=timeout)
        self._thread.join(timeout)
        self._thread = None

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            pending = [item]
            # gather the burst: `batch` seconds, and at least `min_interval` since the last;
            # then what arrived meanwhile joins this message
            until = max(self.clock() + self.batch, self._last_sent + self.min_interval)
            stopping = self._gather(pending, until) or self._gather(pending, None)
            self._send(pending)
            if stopping:
                return

    def _gather(self, pending: list[Alert], until: float | None) -> bool:
        """Add to `pending` what the queue gives until `until` (None: what it holds
        now); True when it gave the stop sign."""
        while True:
            left = None if until is None else until - self.clock()
            if left is not None and left <= 0:
                return False
            try:
                more = self._queue.get_nowait() if left is None else self._queue.get(timeout=left)
            except queue.Empty:
                return False
            if more is None:
                return True
            pending.append(more)

    def _send(self, alerts: list[Alert]) -> None:
        with self._lock:
            lost, self._lost = self._lost, {}
        title, body = render(alerts, self.source, lost)
        severe = any(a.event in SEVERE for a in alerts) or any(e in SEVERE for e in lost)
        self._last_sent = self.clock()
        try:
            ok = self.sender(title, body, severe)
        except Exception as exc:  # noqa: BLE001 - a channel library error must never stop the daemon
            log.warning("alert_failed", alerts=len(alerts), error=type(exc).__name__)
            self._counted([str(a.event) for a in alerts], False)
            self._still_lost(lost)
            return
        self._counted([str(a.event) for a in alerts], bool(ok))
        if ok:
            self.messages += 1
            log.info("alert_sent", alerts=len(alerts), events=sorted({a.event for a in alerts}))
        else:
            log.warning("alert_failed", alerts=len(alerts), error="not delivered")
            self._still_lost(lost)

    def _still_lost(self, lost: Mapping[AlertEvent, int]) -> None:
        """The drops a failed message was to say: said by the next one that goes out
        (not forgotten with the message that failed)."""
        with self._lock:
            for event, n in lost.items():
                self._lost[event] = self._lost.get(event, 0) + n

    def _counted(self, events: list[str], sent: bool) -> None:
        if self.on_result is not None:
            try:
                self.on_result(events, sent)
            except Exception:
                log.exception("alert_count_failed")


@dataclass
class _Streak:
    first: str
    summed_at: float
    count: int = 0  # skips since the first (or the last summary) not yet said
    last: str = ""
    reason: str | None = None

    def summary(self, plan: str) -> str:
        return (
            f"plan {plan}: {self.count} more slot(s) skipped since {self.first}, the last "
            f"{self.last}: {self.reason or '?'}"
        )


def _pause_scope(outcome: RunOutcome) -> str | None:
    """The pause a slot was skipped by (`jupcron pause`: the operator knows, no alert
    but the daily reminder): its plan, `ALL_PAUSED`, or None (not paused)."""
    if outcome.status is not RunStatus.SKIPPED:
        return None
    error = outcome.error or ""
    if error.startswith("all plans paused: "):
        return ALL_PAUSED
    return outcome.plan_name if error.startswith("paused: ") else None


def render(
    alerts: Sequence[Alert], source: str, lost: Mapping[AlertEvent, int] | None = None
) -> tuple[str, str]:
    """One message for a burst: a title counting the events, one line per alert; the
    alerts `lost` (dropped on a full queue) counted first in both (a long title is cut)."""
    counts: dict[str, int] = {}
    for alert in alerts:
        counts[alert.event] = counts.get(alert.event, 0) + 1
    what = ", ".join(f"{n} {event}" for event, n in counts.items())
    head = f"jupcron ({source}): "
    lines = []
    if lost:
        which = ", ".join(f"{n} {event}" for event, n in lost.items())
        dropped = f"{sum(lost.values())} alert(s) dropped, the queue full"
        head += f"{dropped}; "
        lines.append(f"{dropped}: {which} (see jupcron status, jupcron audit)")
    title = f"{head}{alerts[0].text}" if len(alerts) == 1 else (
        f"{head}{len(alerts)} alerts ({what})"
    )  # fmt: skip
    lines += [f"{a.at.strftime('%H:%M:%SZ')} [{a.event}] {a.text}" for a in listed(alerts)]
    if len(alerts) > MESSAGE_LIMIT:
        lines.append(f"… and {len(alerts) - MESSAGE_LIMIT} more (jupcron audit)")
    return title[:250], "\n".join(lines)


def listed(alerts: Sequence[Alert]) -> list[Alert]:
    """The `MESSAGE_LIMIT` alerts a message lists, in their order: the severe ones
    first chosen (an in_doubt run that came after 40 skips is named, not counted
    among "and 11 more"), then the others as they came."""
    if len(alerts) <= MESSAGE_LIMIT:
        return list(alerts)
    order = sorted(range(len(alerts)), key=lambda i: alerts[i].event not in SEVERE)
    return [alerts[i] for i in sorted(order[:MESSAGE_LIMIT])]


def alerts_from_config(
    notify: NotifyConfig,
    *,
    immediate: bool = False,
    on_result: Callable[[list[str], bool], None] | None = None,
) -> Alerts | None:
    """The configured `Alerts` (not started), or None without ``notify.urls``;
    ``immediate``: no gathering (a command that sends before it ends)."""
    urls = [u.get_secret_value() for u in notify.urls]
    if not urls:
        return None
    return Alerts(
        apprise_sender(urls), events=notify.events,
        batch=0.0 if immediate else notify.batch,
        min_interval=0.0 if immediate else notify.min_interval,
        skip_summary=notify.skip_summary, on_result=on_result,
    )  # fmt: skip
