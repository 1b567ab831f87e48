"""The status page builds `jupcron report` over the plans it shows (a page of 100, one
plan for each card's chart: `ReportCache`), and "with `names`, every query reads only
their rows (the page's 100 of 100,000)". The network fees were the exception: their
query read the signed transaction of every landed run of every plan, for each page
refresh and each chart, so a store with a million runs sent a gigabyte of transactions
to the page every few seconds (psycopg holds a whole result in memory). Here a one-plan
chart must read no other plan's signed transaction, and still its own fee. SQLite and
PostgreSQL, the runner against the emulator."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from jupcron.store.engine import session_factory
from jupcron.web.views import ReportCache, chart_row
from tests.fixtures.follow import FollowRigFactory


def test_a_charts_report_reads_only_its_own_plans_signed_transactions(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url)
    shown = f.rig.plan("swap", name="shown")
    f.fire(shown)
    for index in range(3):  # the other plans of a large store
        f.clock.advance(60)
        f.fire(f.rig.plan("swap", name=f"other{index}"))
    others = {row["signed_tx"] for row in f.sql(
        "SELECT r.signed_tx FROM runs r JOIN plans p ON p.id = r.plan_id"
        " WHERE p.name <> 'shown'")}  # fmt: skip
    assert len(others) == 3
    assert None not in others

    sent: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(f.engine, "before_cursor_execute", record)
    try:
        with session_factory(f.engine)() as session:
            row = chart_row(session, ReportCache(), "shown")
    finally:
        event.remove(f.engine, "before_cursor_execute", record)
    assert row is not None
    assert row.paid_runs == 1  # its own fee is there
    assert row.network_fee_lamports > 0

    # every statement the chart's report sent, sent again: what each of them read
    read: set[Any] = set()
    with f.engine.connect() as conn:
        for statement, parameters in sent:
            if statement.lstrip().upper().startswith("SELECT"):
                for found in conn.exec_driver_sql(statement, parameters):
                    read.update(v for v in found if isinstance(v, str))
    leaked = others & read
    assert not leaked, f"one plan's chart read {len(leaked)} signed transactions of other plans"
