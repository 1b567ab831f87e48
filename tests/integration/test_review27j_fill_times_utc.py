"""`jupcron report` and the page read the fills from the ``fills`` view in plain SQL, so
no column type turns their times to UTC: PostgreSQL gives a ``timestamptz`` in the
session's ``TimeZone``, which is the server's setting (initdb takes the machine's
zone: ``Europe/Berlin``, ``Asia/Kolkata``…). The report's table printed the first and
last fill in that zone as if it were UTC, and the page's fills API wrote it with a
``Z``: a fill at 10:00 UTC read 15:30 "UTC" on a server in India. Every time the
report and the page show is UTC (README, "What the money did"). PostgreSQL, the
runner against the emulator, a server zone set on the database."""

from __future__ import annotations

from datetime import UTC

from sqlalchemy import text

from jupcron.report.build import build
from jupcron.report.rows import table_row
from jupcron.store.engine import make_engine, session_factory
from jupcron.web.views import ReportCache, fills_view
from tests.fixtures.follow import FollowRigFactory


def test_fill_times_read_in_utc_whatever_the_servers_zone(
    make_follow_rig: FollowRigFactory, pg_url: str
) -> None:
    f = make_follow_rig(pg_url)
    f.fire(f.rig.plan("swap", name="buy"))
    with f.engine.begin() as conn:
        name = conn.execute(text("SELECT current_database()")).scalar_one()
        conn.execute(text(f"ALTER DATABASE \"{name}\" SET timezone TO 'Asia/Kolkata'"))
    engine = make_engine(pg_url)  # new connections: the server's zone
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SHOW timezone")).scalar_one() == "Asia/Kolkata"
            at = conn.execute(text("SELECT filled_at FROM fills")).scalar_one().astimezone(UTC)
            (report,), known = build(conn, plan="buy")
        with session_factory(engine)() as session:
            shown = fills_view(session, ReportCache(), "buy")
    finally:
        engine.dispose()
    row = table_row(report, known)
    assert (row["first_fill"], row["last_fill"]) == (at.strftime("%Y-%m-%d %H:%M"),) * 2
    assert shown is not None
    assert [p["filled_at"] for p in shown["fills"]] == [at.strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert report.as_dict(known)["first_fill"] == at.isoformat()
