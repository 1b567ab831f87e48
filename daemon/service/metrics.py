"""Prometheus metrics and the health endpoint.

`Metrics` owns its own ``CollectorRegistry`` (never the global one, so tests
and two daemons in one process do not collide). `serve_metrics` starts a small
threaded HTTP listener (loopback by default) with:

* ``GET /metrics`` — the registry in the Prometheus text format;
* ``GET /healthz`` — 200 ``ok`` when ``health()`` is true, else 503.

Given an ``app`` (the status page of daemon/web, on ``web.listen``), every other
request goes to it as a `WebRequest`, ``/metrics`` too (so a token guards it
there), and its `WebResponse` is written back.

Everything is synchronous with threads, like the rest of the daemon.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from jupcron.errors import ConfigError
from jupcron.service.runway_metrics import RunwayGauges
from jupcron.urls import is_loopback_host
from jupcron.web.http import MAX_BODY, WebRequest, WebResponse, host_is_local

log = structlog.get_logger(__name__)

IDLE_TIMEOUT = 30.0  # seconds a connection may sit idle (or trickle a request) before it closes

DEFAULT_LISTEN = "127.0.0.1:9464"
NAMESPACE = "jupcron"

_LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900)
_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60)


class Metrics:
    """Every metric the daemon exports, on a private registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry
        self.runs_total = Counter(
            "runs",
            "Runs that reached a final or waiting state, by plan kind and status.",
            ["kind", "status"],
            namespace=NAMESPACE,
            registry=r,
        )
        self.fire_lag_seconds = Histogram(
            "fire_lag_seconds",
            "Seconds between a slot's scheduled time and the run starting.",
            namespace=NAMESPACE,
            buckets=_LAG_BUCKETS,
            registry=r,
        )
        self.api_latency_seconds = Histogram(
            "api_latency_seconds",
            "Jupiter API call latency by operation and outcome.",
            ["operation", "status"],
            namespace=NAMESPACE,
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.api_retries_total = Counter(
            "api_retries",
            "API calls retried, by operation.",
            ["operation"],
            namespace=NAMESPACE,
            registry=r,
        )
        self.rate_limit_wait_seconds_total = Counter(
            "rate_limit_wait_seconds",
            "Seconds spent waiting for the rate limiter.",
            namespace=NAMESPACE,
            registry=r,
        )
        self.misfires_total = Counter(
            "misfires",
            "Slots skipped because they were found too late (past their grace).",
            ["kind"],
            namespace=NAMESPACE,
            registry=r,
        )
        self.in_doubt_runs = Gauge(
            "in_doubt_runs",
            "Runs whose outcome is not known yet.",
            namespace=NAMESPACE,
            registry=r,
        )
        self.leader = Gauge(
            "leader",
            "1 when this daemon is the leader (schedules), 0 on standby.",
            namespace=NAMESPACE,
            registry=r,
        )
        self.plans = Gauge(
            "plans",
            "Active plans loaded.",
            namespace=NAMESPACE,
            registry=r,
        )
        self.up = Gauge(
            "healthy",
            "1 while the scheduling loop and the store are healthy.",
            namespace=NAMESPACE,
            registry=r,
        )
        self.notifications_total = Counter(
            "notifications",
            "Alerts handed to the notification channels (notify.urls), by event and result "
            "(sent, failed); a message carrying a burst counts each alert in it.",
            ["event", "result"],
            namespace=NAMESPACE,
            registry=r,
        )
        self.runway = RunwayGauges(r)

    # -- recording (names match the issue; all cheap and thread-safe) -----
    def record_run(self, kind: str, status: str) -> None:
        self.runs_total.labels(kind=str(kind), status=str(status)).inc()

    def observe_fire_lag(self, seconds: float) -> None:
        self.fire_lag_seconds.observe(max(0.0, seconds))

    def observe_api_call(self, operation: str, status: str | int, seconds: float) -> None:
        """``status`` is the HTTP status, or a word such as ``timeout``/``error``."""
        self.api_latency_seconds.labels(operation=operation, status=str(status)).observe(
            max(0.0, seconds)
        )

    def record_retry(self, operation: str) -> None:
        self.api_retries_total.labels(operation=operation).inc()

    def add_rate_limit_wait(self, seconds: float) -> None:
        if seconds > 0:
            self.rate_limit_wait_seconds_total.inc(seconds)

    def record_misfire(self, kind: str) -> None:
        self.misfires_total.labels(kind=str(kind)).inc()

    def set_in_doubt(self, count: int) -> None:
        self.in_doubt_runs.set(count)

    def set_leader(self, is_leader: bool) -> None:
        self.leader.set(1 if is_leader else 0)

    def set_plans(self, count: int) -> None:
        self.plans.set(count)

    def record_notifications(self, events: Sequence[str], sent: bool) -> None:
        """One message's alerts (their events), delivered or not."""
        result = "sent" if sent else "failed"
        for event in events:
            self.notifications_total.labels(event=str(event), result=result).inc()

    def render(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)


App = Callable[[WebRequest], WebResponse]


def parse_listen(listen: str, key: str = "metrics.listen") -> tuple[str, int]:
    """``"127.0.0.1:9464"``, ``"[::1]:9464"`` or ``":9464"`` (loopback) -> (host, port)."""
    text = listen.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        raise ConfigError(f"{key} {listen!r}: expected HOST:PORT, e.g. {DEFAULT_LISTEN}")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"{key} {listen!r}: the port must be a number") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"{key} {listen!r}: the port must be 0-65535")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ConfigError(
                f"{key} {listen!r}: the host must be an IP address or localhost"
            ) from None
    return host, port


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        metrics: Metrics,
        health: Callable[[], bool],
        app: App | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ):
        self.idle_timeout = idle_timeout
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.metrics = metrics
        self.health = health
        self.app = app
        # bound to loopback: only a Host naming this machine by IP or localhost (a name that
        # only resolves here is DNS rebinding); another address is scraped by its name
        self.local_only = is_loopback_host(address[0])
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        # an idle (or trickling) connection is closed, not a thread held forever
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        own = path in ("/healthz", "/metrics") and (path == "/healthz" or self.server.app is None)
        if own and self.server.local_only and not host_is_local(self.headers.get("Host")):
            self._reply(403, b"this listener answers only to localhost or an IP address\n",
                        "text/plain; charset=utf-8")  # fmt: skip
            return
        if path == "/healthz":
            ok = _healthy(self.server.health)
            self.server.metrics.up.set(1 if ok else 0)
            body = b"ok\n" if ok else b"unhealthy\n"
            self._reply(200 if ok else 503, body, "text/plain; charset=utf-8")
        elif self.server.app is not None:
            self._to_app()
        elif path == "/metrics":
            self._reply(200, self.server.metrics.render(), CONTENT_TYPE_LATEST)
        else:
            self._reply(404, b"not found\n", "text/plain; charset=utf-8")

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        if self.server.app is None:
            self._reply(405, b"read-only\n", "text/plain; charset=utf-8")
        else:
            self._to_app()

    def _to_app(self) -> None:
        app = self.server.app
        assert app is not None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            self._reply(413, b"request body too large\n", "text/plain; charset=utf-8")
            return
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = WebRequest(self.command, self.path, headers, body, str(self.client_address[0]))
        try:
            answer = app(request)
        except Exception as exc:  # noqa: BLE001 - one bad page must not take the listener down
            log.error("web_request_failed", path=request.path, error=repr(exc))
            answer = WebResponse(500, b"internal error\n", "text/plain; charset=utf-8")
        self._reply(answer.status, answer.body, answer.content_type, answer.all_headers())

    def _reply(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers or ():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: scrapes are not worth a log line each."""


def _healthy(health: Callable[[], bool]) -> bool:
    try:
        return bool(health())
    except Exception as exc:  # noqa: BLE001 - a failing check is an unhealthy answer
        log.warning("health_check_failed", error=repr(exc))
        return False


@dataclass
class MetricsServer:
    """A running listener; `stop` shuts it down and joins its thread."""

    host: str
    port: int
    _server: _Server
    _thread: threading.Thread

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_metrics(
    metrics: Metrics,
    listen: str = DEFAULT_LISTEN,
    health: Callable[[], bool] = lambda: True,
    app: App | None = None,
    key: str = "metrics.listen",
    idle_timeout: float = IDLE_TIMEOUT,
) -> MetricsServer:
    """Start the listener in a background thread (port 0 picks a free port); with
    `app`, the status page too (`key` names the config key in errors and the log)."""
    host, port = parse_listen(listen, key)
    try:
        server = _Server((host, port), metrics, health, app, idle_timeout)
    except OSError as exc:
        raise ConfigError(f"{key} {listen!r}: cannot listen: {exc.strerror}") from None
    bound_port = int(server.server_address[1])
    name = "web" if app is not None else "metrics"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=name, daemon=True
    )
    thread.start()
    if app is not None:
        log.info("web_listening", host=host, port=bound_port)
    else:
        log.info("metrics_listening", host=host, port=bound_port)
    return MetricsServer(host, bound_port, server, thread)
