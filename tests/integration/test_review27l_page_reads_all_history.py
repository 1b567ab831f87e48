"""The status page's report (`ReportCache`, rebuilt every `REPORT_TTL` seconds while
the page is open, once for the page and once for each card's chart) reads every
fill, execute answer, ``ordered`` event and landed run's signed transaction its
plans ever had, at every rebuild, even when nothing changed: its cost grows with
the daemon's age (a plan that fires hourly has 8,760 landed runs a year, each
~1 KB of signed transaction sent to the page's process every few seconds). A
design issue (the fees could be stored with the run when it lands, the figures
kept as running totals): marked xfail until it is decided."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event

from jupcron.store.engine import session_factory
from jupcron.web.views import ReportCache, chart_row
from tests.fixtures.follow import FollowRigFactory

RUNS = 6


@pytest.mark.xfail(
    strict=True,
    reason="the page's report reads its plans' whole history at "
    "every rebuild (design: store the fee with the run, keep running totals)",
)
def test_a_refresh_reads_no_more_when_the_history_is_longer(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    plan = f.rig.plan("swap", name="hourly")
    for _ in range(RUNS):
        f.fire(plan)
        f.clock.advance(3600)
    landed = {r["signed_tx"] for r in f.sql("SELECT signed_tx FROM runs")}
    assert len(landed) == RUNS

    ticks = iter([0.0, 10.0, 10.0])  # the second `get` is past the ttl: a rebuild
    cache = ReportCache(clock=lambda: next(ticks))
    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    with session_factory(f.engine)() as session:
        assert chart_row(session, cache, "hourly") is not None
        event.listen(f.engine, "before_cursor_execute", record)
        try:
            row = chart_row(session, cache, "hourly")  # the next refresh, nothing new
        finally:
            event.remove(f.engine, "before_cursor_execute", record)
    assert row is not None
    assert row.paid_runs == RUNS
    read: list[Any] = []
    with f.engine.connect() as conn:
        for statement, parameters in sent:
            if statement.lstrip().upper().startswith("SELECT"):
                for found in conn.exec_driver_sql(statement, parameters):
                    read.extend(v for v in found if isinstance(v, str) and v in landed)
    assert len(read) <= 1, f"one refresh read {len(read)} signed transactions of {RUNS} runs"
