"""The status page builds `jupcron report` over the plans it shows every few seconds
(`ReportCache`), and each plan's market price is the mean of the USD prices the
follower stored over the period of its fills (`token_prices`: a row per mint at
every poll, for as long as the daemon runs). Each row of the report read those
prices again for itself: a page of 100 plans that trade SOL for USDC read a year's
SOL and USDC prices 100 times at every refresh, so the page's cost grew with the
number of plans times the daemon's age. A build reads each mint's prices once.
SQLite and PostgreSQL, the runner against the emulator."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import event

from jupcron.report.build import build
from jupcron.store import tokens
from jupcron.store.engine import begin
from tests.fixtures.follow import DAY, SOL, FollowRigFactory
from tests.fixtures.runner import USDC

PLANS = 4
SAMPLES = 60  # prices stored per mint over the plans' fills


def test_a_report_reads_each_mints_prices_once_however_many_plans_trade_it(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plans = [f.rig.plan("swap", name=f"dca{i}") for i in range(PLANS)]
    start = f.clock.now
    for plan in plans:  # each plan's first fill, then its last a day on
        f.fire(plan)
        f.clock.advance(60)
    f.clock.advance(DAY)
    for plan in plans:
        f.fire(plan)
        f.clock.advance(60)
    readings: dict[str, list[tuple[Any, Decimal]]] = {}
    with begin(f.engine) as conn:
        for mint, decimals, usd in ((SOL, 9, 150), (USDC, 6, 1)):
            tokens.save(conn, tokens.Token(mint, decimals, None, "api"), now=start)
            for i in range(SAMPLES):  # the follower's readings over that day
                at = start + timedelta(minutes=10 + 20 * i)
                price = Decimal(usd) + Decimal(i) / 100
                tokens.save_price(conn, mint, price, at=at)
                readings.setdefault(mint, []).append((at, price))

    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    names = [p.name for p in plans]
    event.listen(f.engine, "before_cursor_execute", record)
    try:
        with f.engine.connect() as conn:
            reports, _ = build(conn, names=names)
    finally:
        event.remove(f.engine, "before_cursor_execute", record)
    assert len(reports) == PLANS
    for report in reports:  # each plan's mean over its own fills' period
        times = [fill.filled_at for fill in report.fills]
        means = []
        for mint in (report.input_mint, report.output_mint):
            assert mint is not None
            within = [p for at, p in readings[mint] if min(times) <= at <= max(times)]
            means.append(sum(within, Decimal(0)) / len(within))
        assert report.market_usd == tuple(means)

    read = 0  # price rows the build's statements read, each sent again
    with f.engine.connect() as conn:
        for statement, parameters in sent:
            if "token_prices" in statement and statement.lstrip().upper().startswith("SELECT"):
                read += len(list(conn.exec_driver_sql(statement, parameters)))
    assert read <= 2 * SAMPLES, (
        f"{PLANS} plans' report read {read} price rows of 2 mints' {2 * SAMPLES}"
    )
