"""The daemon's Prometheus metrics: every series it exports, on a registry of its own
(never the global one, so tests and two daemons in one process do not collide).

Fed by the service (runs, API attempts, leadership, alerts, the runway watch) and
served by the listener (daemon/listen/server.py) at ``GET /metrics``; the page
(daemon/web) shows some of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from jupcron.listen.runway_metrics import RunwayGauges

NAMESPACE = "jupcron"

_LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900)
_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60)


class Metrics:
    """Every metric the daemon exports, on a private registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry

        def counter(name: str, text: str, labels: Sequence[str] = ()) -> Counter:
            return Counter(name, text, labels, namespace=NAMESPACE, registry=r)

        def gauge(name: str, text: str) -> Gauge:
            return Gauge(name, text, namespace=NAMESPACE, registry=r)

        self.runs_total = counter(
            "runs",
            "Runs that reached a final or waiting state, by plan kind and status.",
            ["kind", "status"],
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
        self.api_retries_total = counter(
            "api_retries", "API calls retried, by operation.", ["operation"]
        )
        self.rate_limit_wait_seconds_total = counter(
            "rate_limit_wait_seconds", "Seconds spent waiting for the rate limiter."
        )
        self.misfires_total = counter(
            "misfires",
            "Slots skipped because they were found too late (past their grace).",
            ["kind"],
        )
        self.in_doubt_runs = gauge("in_doubt_runs", "Runs whose outcome is not known yet.")
        self.leader = gauge("leader", "1 when this daemon is the leader (schedules), 0 on standby.")
        self.plans = gauge("plans", "Active plans loaded.")
        self.up = gauge("healthy", "1 while the scheduling loop and the store are healthy.")
        self.notifications_total = counter(
            "notifications",
            "Alerts handed to the notification channels (notify.urls), by event and result "
            "(sent, failed); a message carrying a burst counts each alert in it.",
            ["event", "result"],
        )
        self.webhook_notifications_total = counter(
            "webhook_notifications",
            "Messages for notify.webhook_url, by webhook event and result (sent; failed: "
            "refused or retries exhausted; dropped: never tried, the queue full or stopping).",
            ["event", "result"],
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

    def record_webhook(self, event: str, result: str) -> None:
        """One webhook message: ``sent``, ``failed`` or ``dropped``."""
        self.webhook_notifications_total.labels(event=str(event), result=result).inc()

    def render(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)
