"""Pieces of the status page without I/O: the host check, the activity windows,
the chart's series and drawing (with a hostile plan name), the page's texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from jupcron.api.client import Attempt
from jupcron.domain import RunStatus
from jupcron.listen.messages import host_is_local
from jupcron.report.plan import Fill, PlanReport
from jupcron.runner.outcome import RunOutcome
from jupcron.store.tokens import Token
from jupcron.web.activity import Activity
from jupcron.web.chart import chart_svg, series
from jupcron.web.http import json_response

USDC, SOL = (
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "So11111111111111111111111111111111111111112",
)
T0 = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(("host", "local"), [
    ("localhost", True), ("localhost:8080", True), ("127.0.0.1:8080", True), ("[::1]:80", True),
    ("10.1.2.3", True), ("evil.example", False), ("localhost.evil.example", False), ("", False),
    (None, False), ("[::1", False),
])  # fmt: skip
def test_host_check(host: str | None, local: bool) -> None:
    assert host_is_local(host) is local


def test_json_is_inert_as_html() -> None:
    body = json_response({"x": "</script><b>&"}).body.decode()
    assert "<" not in body
    assert ">" not in body
    assert "&" not in body


def test_activity_counts_the_last_minute_and_hour() -> None:
    now = [1000.0]
    activity = Activity(clock=lambda: now[0])
    activity.attempt(Attempt("ultra_order", 1, 200, None, 0.0))
    activity.attempt(Attempt("ultra_order", 2, 429, "rate", 0.0))
    activity.attempt(Attempt("execute_ultra", 1, None, "timeout", 0.0))
    bad = RunOutcome(1, "p", "swap", T0, RunStatus.FAILED)
    activity.run_finished(bad)
    activity.run_finished(RunOutcome(2, "p", "swap", T0, RunStatus.SUCCEEDED))
    counts = activity.counts()
    assert (
        counts.requests_last_minute,
        counts.api_errors_last_hour,
        counts.run_errors_last_hour,
    ) == (3, 2, 1)
    now[0] += 61
    counts = activity.counts()
    assert (
        counts.requests_last_minute,
        counts.api_errors_last_hour,
        counts.run_errors_last_hour,
    ) == (0, 2, 1)
    now[0] += 3600
    assert activity.counts().api_errors_last_hour == 0
    assert activity.counts().run_errors_last_hour == 0


def report(name: str, fills: list[tuple[int, int, int]]) -> PlanReport:
    plan = PlanReport(name, "swap", USDC, SOL)
    plan.input_token = Token(USDC, 6, "USDC", "api")
    plan.output_token = Token(SOL, 9, "SOL", "api")
    for minutes, spent, got in fills:
        plan.fills.append(
            Fill(1, T0 + timedelta(minutes=minutes), "execute", spent, got, USDC, SOL)
        )
    return plan


def test_series_is_cumulative_with_exact_prices() -> None:
    points = series(report("p", [(10, 2_000_000, 13_000_000), (0, 1_000_000, 6_660_000)]))
    assert [p.at.minute for p in points] == [0, 10]
    assert [p.received_total for p in points] == [6_660_000, 19_660_000]
    assert points[1].received_total_ui == Decimal("0.019660000")
    assert points[0].price == Decimal("150.15015")  # USDC per SOL, as traders quote it
    assert points[1].as_dict()["price"] == "153.84615"


def test_chart_is_the_report_renderer_with_units_and_escapes_the_name() -> None:
    svg = chart_svg(report("a<b>&", [(0, 1_000_000, 6_660_000), (60, 1_000_000, 6_500_000)]))
    assert "<svg" in svg
    assert "<script" not in svg
    assert "a&lt;b&gt;&amp;: cumulative spend and value" in svg
    assert "a<b>" not in svg
    for words in ("USDC spent", "SOL bought, in USDC", "USDC per SOL", "2026-11-23 UTC",
                  "fill price"):  # fmt: skip
        assert words in svg, words


def test_chart_of_one_fill_and_of_none() -> None:
    one = chart_svg(report("one", [(0, 1_000_000, 6_660_000)]))
    assert "USDC per SOL" in one
    assert "no fills yet" in chart_svg(report("none", []))
