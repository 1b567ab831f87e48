"""Run listeners that feed the service's outputs: metrics and the webhook."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jupcron.listen.metrics import Metrics
from jupcron.runner.outcome import RunOutcome
from jupcron.service.webhook import Notification, WebhookNotifier


class MetricsListener:
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def run_finished(self, outcome: RunOutcome) -> None:
        self.metrics.record_run(outcome.kind, str(outcome.status))
        if outcome.fire_lag is not None:
            self.metrics.observe_fire_lag(max(0.0, outcome.fire_lag))


class AttemptMetrics:
    """Feeds every API attempt of every run into the metrics."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def __call__(self, attempt: Any) -> None:
        status = attempt.http_status if attempt.http_status is not None else "error"
        self.metrics.observe_api_call(attempt.operation, status, float(attempt.elapsed or 0.0))
        if attempt.number > 1:
            self.metrics.record_retry(attempt.operation)
        if attempt.waited:
            self.metrics.add_rate_limit_wait(float(attempt.waited))


class WebhookListener:
    """Sends failed, rejected and in-doubt runs to the configured webhook."""

    def __init__(self, notifier: WebhookNotifier) -> None:
        self.notifier = notifier

    def run_finished(self, outcome: RunOutcome) -> None:
        now = datetime.now(UTC)
        notification = Notification.for_run(outcome, outcome.plan_name, now, outcome.kind)
        if notification is not None:
            self.notifier.send(notification)
