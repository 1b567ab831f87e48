"""What `jupcron run` builds from its config, and takes down at the end: the alert
and webhook senders, the run listeners, the runtime (store, API, wallet, runner),
the dependency checks, and the listeners on ``metrics.listen`` and ``web.listen``.

Built in the order the daemon's start needs (daemon/service/daemon.py): the alerts
first (a failed start is said too), the runtime once the store answers, the
servers once the leader lock was tried; stopped in the reverse order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from jupcron.app import Runtime, build_runtime
from jupcron.config import Config
from jupcron.domain import DEFAULT_WALLET
from jupcron.errors import FatalError
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState, Page, PageFactory
from jupcron.listen.server import Listener, same_address, start_listener
from jupcron.runner.outcome import RunListener
from jupcron.service.alerts import AlertEvent, Alerts, alerts_from_config
from jupcron.service.dependencies import Dependencies
from jupcron.service.listeners import AttemptMetrics, MetricsListener, WebhookListener
from jupcron.service.webhook import WebhookNotifier
from jupcron.store.handle import Store


class Wiring:
    def __init__(
        self, *, metrics: Metrics, page: PageFactory, transport: httpx.BaseTransport | None
    ) -> None:
        self.metrics = metrics
        self.page = page  # the status page, made by the composition root (daemon/cli/run.py)
        self.transport = transport
        self.alerts: Alerts | None = None
        self.webhook: WebhookNotifier | None = None
        self.runtime: Runtime | None = None
        self.dependencies: Dependencies | None = None  # API key, RPC, wallet: asked at start
        self.metrics_server: Listener | None = None
        self.web_server: Page | None = None

    def alert(self, event: AlertEvent, text: str) -> None:
        if self.alerts is not None:
            self.alerts.note(event, text)

    def tells(self, event: AlertEvent) -> bool:
        """Whether an alert of `event` goes out (`notify.events`); with no alerts at
        all, nothing does, and nothing need stand in for it."""
        return self.alerts is None or event in self.alerts.events

    def start_alerts(self, config: Config) -> None:
        """First: a start that fails is said too. Then the page's settings checked
        (a bad web.* (the token file, say) stops the start here)."""
        self.alerts = alerts_from_config(config.notify, on_result=self.metrics.record_notifications)
        if self.alerts is not None:
            self.alerts.start()
        self.page.check(config)

    def build_runtime(self, config: Config, store: Store, status: RunListener) -> Runtime:
        """The runtime, its runs heard by the metrics, `status`, the page, the alerts and
        the webhook (started here when configured)."""
        listeners: list[RunListener] = [MetricsListener(self.metrics), status, self.page]
        if self.alerts is not None:
            listeners.append(self.alerts)
        if config.notify.webhook_url:
            self.webhook = WebhookNotifier(
                config.notify.webhook_url, allow_insecure_http=config.notify.allow_insecure_http,
                on_result=self.metrics.record_webhook,
            ).start()  # fmt: skip
            listeners.append(WebhookListener(self.webhook))
        self.runtime = build_runtime(
            config,
            transport=self.transport,
            listeners=listeners,
            store=store,
            on_attempt=self._attempt_observer(),
        )
        return self.runtime

    def _attempt_observer(self) -> Callable[[Any], None]:
        """Every API attempt of every run: into the metrics and the page's activity."""
        to_metrics = AttemptMetrics(self.metrics)

        def observe(attempt: Any) -> None:
            to_metrics(attempt)
            self.page.attempt(attempt)

        return observe

    def probe(
        self, config: Callable[[], Config], on_fatal: Callable[[FatalError], None]
    ) -> Dependencies:
        """The API key and the RPC node, asked once before anything is scheduled: a key
        the API refuses is fatal now (not at the first run, a week later for a weekly
        plan); an API or RPC node that does not answer, or a wallet without SOL, leaves
        the daemon running, degraded (said in the log, the STATUS= line, the start alert
        and the heartbeat: `jupcron status` and the page), asked again until it works
        (daemon/service/dependencies.py)."""
        assert self.runtime is not None
        addresses = self.runtime.addresses()
        single = list(addresses) == [DEFAULT_WALLET]
        self.dependencies = Dependencies(
            config, addresses[DEFAULT_WALLET] if single else addresses,
            transport=self.transport, on_fatal=on_fatal,
            tell=lambda text: self.alert(AlertEvent.DEPENDENCY_DOWN, text),
            start_alert=self.tells(AlertEvent.DAEMON_START),
        )  # fmt: skip
        self.dependencies.at_start()
        return self.dependencies

    def degraded(self) -> list[str]:
        return self.dependencies.degraded() if self.dependencies is not None else []

    def start_servers(
        self, config: Config, *, health: Callable[[], bool], live: Callable[[], LiveState]
    ) -> None:
        """/metrics and /healthz on ``metrics.listen`` (unless the page's address, however
        written: then on the page's listener), the page (with them) on ``web.listen``."""
        metrics_listen, web_listen = config.metrics.listen, config.web.listen
        if metrics_listen and not (web_listen and same_address(metrics_listen, web_listen)):
            self.metrics_server = start_listener(self.metrics, metrics_listen, health)
        self.web_server = self.page.start(config, metrics=self.metrics, health=health, live=live)

    def stop_servers(self) -> None:
        if self.metrics_server is not None:
            self.metrics_server.stop()
        if self.web_server is not None:
            self.web_server.stop()
