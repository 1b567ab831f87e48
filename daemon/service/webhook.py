"""Webhook notifications for runs that need an operator's eye, and for misfires.

`notify.webhook_url` receives a small JSON message (``POST``) when a run ends
``failed``, ``rejected`` or ``in_doubt``, when a slot misfires, and when the
follower finds an order of ours whose money waits (held, overdue, unaccounted:
once each, daemon/follower/loop.py). Delivery
runs in one background thread with a bounded queue and bounded retries
(transport errors, 408, 429 and 5xx are retried with exponential backoff; any
other 4xx is given up at once), so a slow receiver never holds up a run. Each
message's end is told to ``on_result`` (the metrics: ``sent``, ``failed`` when given
up, ``dropped`` when never tried: the queue full, or the notifier stopping).

The payload is built from an explicit list of fields (`Notification`), never
from a run row: no transaction, no key, no request body can slip in. The
webhook URL itself often carries a token (Slack, Discord…), so logs show only
its host, errors and ``repr()`` show it through `mask_url`, and plain
``http://`` is refused unless it goes to this machine or
``notify.allow_insecure_http`` is set.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import httpx
import structlog

from jupcron.domain import RunStatus
from jupcron.logs import mask_secrets
from jupcron.runner.outcome import RunOutcome
from jupcron.store.records import RunRecord
from jupcron.urls import checked_url, mask_url

log = structlog.get_logger(__name__)

REASON_LIMIT = 500


class WebhookEvent(StrEnum):
    RUN_FAILED = "run_failed"
    RUN_REJECTED = "run_rejected"
    RUN_IN_DOUBT = "run_in_doubt"
    MISFIRE = "misfire"
    ORDER_HELD = "order_held"
    ORDER_OVERDUE = "order_overdue"
    ORDER_UNACCOUNTED = "order_unaccounted"


# money waiting in an order (daemon/follower/loop.py's notices; the reason says it all)
ORDER_EVENTS = frozenset({WebhookEvent.ORDER_HELD, WebhookEvent.ORDER_OVERDUE,
                          WebhookEvent.ORDER_UNACCOUNTED})  # fmt: skip

NOTIFY_STATUSES: dict[RunStatus, WebhookEvent] = {
    RunStatus.FAILED: WebhookEvent.RUN_FAILED,
    RunStatus.REJECTED: WebhookEvent.RUN_REJECTED,
    RunStatus.IN_DOUBT: WebhookEvent.RUN_IN_DOUBT,
}


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _trim(text: str | None) -> str | None:
    if text is None:
        return None
    masked = mask_secrets(None, "", {"reason": " ".join(text.split())})["reason"]
    text = str(masked)
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


@dataclass(frozen=True)
class Notification:
    """One message; every field is public information about a run or a slot."""

    event: WebhookEvent
    plan: str
    at: datetime
    kind: str | None = None
    run_id: int | None = None
    status: str | None = None
    scheduled_for: datetime | None = None
    reason: str | None = None
    error_code: str | None = None
    request_id: str | None = None
    signature: str | None = None
    missed: int | None = None  # a misfire: how many slots (`scheduled_for`: the latest)
    order: str | None = None  # an order's notice: the order (its reason: what waits, how back)

    @classmethod
    def for_run(
        cls, run: RunRecord | RunOutcome, plan: str, now: datetime, kind: str | None = None
    ) -> Notification | None:
        """The message for a run that ended in a notified status, else None: from its
        row, or from the outcome the runner tells its listeners."""
        event = NOTIFY_STATUSES.get(run.status)
        if event is None:
            return None
        return cls(
            event=event,
            plan=plan,
            at=now,
            kind=kind,
            run_id=run.run_id if isinstance(run, RunOutcome) else run.id,
            status=str(run.status),
            scheduled_for=run.scheduled_for,
            reason=_trim(run.error),
            error_code=run.error_code,
            request_id=run.request_id,
            signature=run.signature,
        )

    @classmethod
    def misfire(
        cls,
        plan: str,
        scheduled_for: datetime,
        now: datetime,
        kind: str | None = None,
        reason: str | None = None,
        missed: int = 1,
    ) -> Notification:
        """Slots of one plan found after their grace period, said once: ``missed`` of
        them, the latest ``scheduled_for``."""
        default = (
            "the slot was found after its grace period" if missed == 1
            else f"{missed} slots were found after their grace period"
        )  # fmt: skip
        return cls(
            event=WebhookEvent.MISFIRE,
            plan=plan,
            at=now,
            kind=kind,
            scheduled_for=scheduled_for,
            reason=_trim(reason or default),
            missed=missed,
        )

    @classmethod
    def for_order(
        cls,
        event: WebhookEvent,
        plan: str | None,
        order: str | None,
        run_id: int | None,
        line: str,
        now: datetime,
    ) -> Notification:
        """A held, overdue or unaccounted order; `line` says what waits and how to get
        it back (the follower's `OrderNotice.text`)."""
        return cls(event=event, plan=plan or "?", at=now, run_id=run_id, order=order,
                   reason=_trim(line))  # fmt: skip

    def text(self) -> str:
        """A one-line summary (Slack/Mattermost show the ``text`` field)."""
        when = _iso(self.scheduled_for) or "?"
        if self.event in ORDER_EVENTS:
            return f"jupcron: {self.event}: {self.reason}"
        if self.event is WebhookEvent.MISFIRE and (self.missed or 1) > 1:
            head = f"jupcron: plan {self.plan} missed {self.missed} slots, the last {when}"
        elif self.event is WebhookEvent.MISFIRE:
            head = f"jupcron: plan {self.plan} missed its {when} slot"
        else:
            head = f"jupcron: plan {self.plan} run {self.run_id} ({when}) is {self.status}"
        return f"{head}: {self.reason}" if self.reason else head

    def payload(self, source: str) -> dict[str, Any]:
        data = asdict(self)
        data["event"] = str(self.event)
        data["at"] = _iso(self.at)
        data["scheduled_for"] = _iso(self.scheduled_for)
        return {"source": source, "text": self.text(), **data}


def webhook_host(url: str) -> str:
    """What logs may show of the URL: its host (the path often holds a token)."""
    try:
        return httpx.URL(url).host or "?"
    except httpx.InvalidURL:
        return "?"


def check_webhook_url(url: str, allow_insecure_http: bool = False) -> str:
    """``url`` if it can be posted to; plain http only to this machine unless allowed
    (``notify.allow_insecure_http``): the token in it would travel in clear."""
    return checked_url(
        url,
        key="notify.webhook_url",
        carries="the webhook's token and the runs' details",
        allow_insecure=allow_insecure_http,
    )


_STOP = object()


class WebhookNotifier:
    """Posts `Notification`s from a background thread with bounded retries.

    ``transport`` is the httpx seam (tests pass a mock or use a loopback
    server). Call `start` once, `send` from any thread, `stop` on shutdown.
    """

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        max_attempts: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        timeout: float = 5.0,
        queue_size: int = 1000,
        source: str | None = None,
        allow_insecure_http: bool = False,
        on_result: Callable[[str, str], None] | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.url = check_webhook_url(url, allow_insecure_http)
        self.host = webhook_host(url)
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.source = source or f"jupcron@{socket.gethostname()}"
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(timeout),
            headers={"user-agent": "jupcron-webhook", "content-type": "application/json"},
            follow_redirects=False,
        )
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self.on_result = on_result  # each message's event, and sent, failed or dropped
        self.delivered = 0
        self.dropped = 0

    def __repr__(self) -> str:
        return f"WebhookNotifier(url={mask_url(self.url)!r})"

    def start(self) -> WebhookNotifier:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="webhook", daemon=True)
            self._thread.start()
        return self

    def send(self, notification: Notification) -> bool:
        """Queue a message; False (and a log line) when the queue is full or closing."""
        reason = "stopping" if self._closing.is_set() else None
        if reason is None:
            try:
                self._queue.put_nowait(notification)
            except queue.Full:
                reason = "queue full"
        if reason is None:
            return True
        self.dropped += 1
        log.warning("webhook_dropped", notification=str(notification.event), reason=reason)
        self._counted(notification, "dropped")
        return False

    def send_run(self, run: RunRecord, plan: str, now: datetime, kind: str | None = None) -> bool:
        """Queue the message for ``run`` if its status is one we notify about."""
        notification = Notification.for_run(run, plan, now, kind)
        return False if notification is None else self.send(notification)

    def stop(self, timeout: float = 10.0) -> None:
        """Deliver what is queued (no more retry waits), then end the thread. A thread
        still delivering after `timeout` (0 s after a slow stop) goes on in the
        background while the process lives, and closes the client itself: closed under
        it, its next post raised (a traceback) and the rest were never told."""
        self._closing.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            with contextlib.suppress(queue.Full):
                self._queue.put(_STOP, timeout=timeout)
            thread.join(timeout)
            if thread.is_alive():
                return  # it closes the client when it ends
        self._client.close()

    # -- the thread ---------------------------------------------------------------
    def _work(self) -> None:
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                self._deliver(item)
        finally:
            self._client.close()

    def _deliver(self, notification: Notification) -> bool:
        sent = self._attempts(notification)
        self._counted(notification, "sent" if sent else "failed")
        return sent

    def _counted(self, notification: Notification, result: str) -> None:
        if self.on_result is not None:
            try:
                self.on_result(str(notification.event), result)
            except Exception:
                log.exception("webhook_count_failed")

    def _attempts(self, notification: Notification) -> bool:
        payload = notification.payload(self.source)
        event = str(notification.event)
        for attempt in range(1, self.max_attempts + 1):
            retry, outcome = self._post(payload)
            if outcome == "ok":
                self.delivered += 1
                log.info("webhook_sent", notification=event, host=self.host, attempts=attempt)
                return True
            if not retry:
                log.warning("webhook_rejected", notification=event, host=self.host, outcome=outcome)
                return False
            if attempt == self.max_attempts:
                break
            delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
            log.info(
                "webhook_retry", notification=event, host=self.host, outcome=outcome, delay=delay
            )
            if self._closing.wait(delay):
                break  # shutting down: no more waiting
        log.warning("webhook_failed", notification=event, host=self.host, outcome=outcome)
        return False

    def _post(self, payload: dict[str, Any]) -> tuple[bool, str]:
        """(retry?, outcome): ``ok``, ``http_<status>`` or the transport error's class."""
        try:
            response = self._client.post(self.url, json=payload)
        except httpx.HTTPError as exc:
            return True, type(exc).__name__
        status = response.status_code
        if 200 <= status < 300:
            return False, "ok"
        return (status in (408, 429) or status >= 500), f"http_{status}"
