"""The order notices are events `notify.events` may name, severe, and said in one line
with the plan, the order, what waits and how to get it back."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.config.sections import NOTIFY_EVENTS, NotifyConfig
from jupcron.follower.loop import describe
from jupcron.service.alerts import SEVERE, AlertEvent
from jupcron.service.webhook import WebhookEvent
from jupcron.store.notices import NOTICE_STEPS, OrderNotice


def test_each_notice_is_a_severe_event_notify_events_can_name() -> None:
    assert NotifyConfig(events=list(NOTICE_STEPS)).events == list(NOTICE_STEPS)
    for step in NOTICE_STEPS:
        assert step in NOTIFY_EVENTS
        assert AlertEvent(step) in SEVERE
        assert WebhookEvent(step) == step


def test_an_overdue_order_is_one_line_with_what_waits() -> None:
    notice = OrderNotice(
        step="order_overdue", at=datetime(2026, 1, 1, tzinfo=UTC), order="Ord1",
        source="recurring", run_id=7, plan="dca-sol",
        detail={"key": "Ord1", "expected_end": "2026-01-01T00:00:00+00:00",
                "remaining": "5000", "deposited": "9000"},
        mint="MintX",
    )  # fmt: skip
    line = describe(notice)
    assert "\n" not in line
    for fact in ("dca-sol", "Ord1", "5000", "MintX", "cancel"):
        assert fact in line
