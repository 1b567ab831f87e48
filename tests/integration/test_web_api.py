"""The status page's JSON twins, the page and the chart over loopback HTTP, on
SQLite and PostgreSQL: real runs (the runner against the emulator) in a real
store, read through the page's own read-only engine."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import Listener, start_listener
from jupcron.store.engine import open_reader, transaction
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.runner import Rig, RigFactory
from tests.support import stopping

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def live() -> LiveState:
    return LiveState(node="host:1", rate_limit=1.0, wallet="WALLET")


class Web:
    def __init__(self, rig: Rig, server: Listener) -> None:
        self.rig, self.server = rig, server

    def get(self, path: str, status: int = 200) -> httpx.Response:
        answer = httpx.get(self.server.url + path, timeout=10)
        assert answer.status_code == status, answer.text
        return answer

    def json(self, path: str) -> Any:
        return self.get(path).json()


@pytest.fixture
def web(make_rig: RigFactory, db_url: str) -> Iterator[Web]:
    rig = make_rig(db_url=db_url)
    engine = open_reader(db_url)
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity())
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield Web(rig, server)
    stopping.later(server.stop, engine.dispose)  # behind the test, in this order


def describe(rig: Rig, name: str, description: str) -> None:
    with transaction(rig.factory) as session:
        session.execute(text("UPDATE plans SET description = :d WHERE name = :n"),
                        {"d": description, "n": name})  # fmt: skip


def test_json_twins_show_plans_runs_and_what_the_money_did(web: Web) -> None:
    rig = web.rig
    swap = rig.plan("swap", name="buy-sol", schedule={"every": 3600})
    rig.plan("recurring", name="weekly-dca", schedule={"cron": "0 9 * * MON", "timezone": "UTC"})
    describe(rig, "buy-sol", HOSTILE)
    slot = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    outcome = rig.runner().fire(swap, slot)
    assert outcome is not None
    assert str(outcome.status) == "succeeded"
    assert len(rig.emulator.ledger.landed()) == 1

    plans = web.json("/api/plans")
    assert plans["total"] == 2
    by_name = {p["name"]: p for p in plans["plans"]}
    assert list(by_name) == ["buy-sol", "weekly-dca"]
    bought = by_name["buy-sol"]
    assert bought["description"] == HOSTILE
    assert bought["schedule"] == "every 1h"
    assert len(bought["next_fires"]) == 3
    assert bought["last_status"] == "succeeded"
    assert bought["last_run_id"] == outcome.run_id
    assert bought["paused"] is None
    assert bought["money"]["fills"] == 1
    assert bought["money"]["spent"] == str(swap.body["amount"])
    assert int(bought["money"]["received"]) > 0
    assert bought["chart"] == "/charts/buy-sol.svg?fills=1"
    assert by_name["weekly-dca"]["last_status"] is None
    assert by_name["weekly-dca"]["chart"] is None
    assert by_name["weekly-dca"]["next_fires"][0].endswith("T09:00:00Z")

    runs = web.json("/api/runs")["runs"]
    assert [(r["plan_name"], r["status"]) for r in runs] == [("buy-sol", "succeeded")]
    assert runs[0]["signature"] == outcome.signature

    status = web.json("/api/status")
    assert status["plans_enabled"] == 2
    assert (status["running"], status["role"], status["daemons"]) == (False, None, [])
    assert status["in_doubt"] == []
    assert status["in_flight"] == []

    fills = web.json("/api/plans/buy-sol/fills")["fills"]
    assert len(fills) == 1
    assert fills[0]["in_amount"] == bought["money"]["spent"]
    assert fills[0]["received_total"] == bought["money"]["received"]
    chart = web.get("/charts/buy-sol.svg")
    assert chart.headers["content-type"] == "image/svg+xml"
    assert "USDC per SOL" in chart.text  # the report's renderer, units on its axes
    assert "unsafe-inline" in chart.headers["content-security-policy"]
    assert "script" not in chart.headers["content-security-policy"]

    page = web.get("/")
    assert HOSTILE not in page.text  # escaped: the markup never reaches the page as markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    raw = web.get("/api/plans").text
    assert "<script>" not in raw  # JSON escapes < > & too: inert even if sniffed as HTML
    assert "\\u003cscript\\u003e" in raw


def test_an_in_doubt_run_is_highlighted_with_what_to_do(web: Web) -> None:
    rig = web.rig
    plan = rig.plan("swap", name="lost")
    outcome = rig.runner().fire(plan, datetime.now(UTC).replace(microsecond=0))
    assert outcome is not None
    with transaction(rig.factory) as session:
        session.execute(text("UPDATE runs SET status = 'in_doubt' WHERE id = :id"),
                        {"id": outcome.run_id})  # fmt: skip
    status = web.json("/api/status")
    assert [r["run_id"] for r in status["in_doubt"]] == [outcome.run_id]
    assert status["in_doubt"][0]["settle"] == (
        f"jupcron settle {outcome.run_id} --landed|--not-landed --reason TEXT"
    )
    assert "on-chain" in status["in_doubt_help"]
    page = web.get("/").text
    assert 'id="doubts" hidden' not in page
    assert f"jupcron settle {outcome.run_id}" in page


def test_no_plan_page_and_unknown_names(web: Web) -> None:
    assert web.json("/api/plans") == {"total": 0, "offset": 0, "limit": 100, "plans": [],
                                      "text": {"range": "0–0 of 0"}}  # fmt: skip
    assert "No enabled plans" in web.get("/").text
    web.get("/api/plans/nope/fills", 404)
    web.get("/charts/nope.svg", 404)
    web.get("/charts/..%2F..%2Fetc.svg", 404)


def test_the_pages_engine_cannot_write(db_url: str) -> None:
    engine = open_reader(db_url)
    try:
        with engine.connect() as conn, pytest.raises(DBAPIError):
            conn.execute(text("INSERT INTO store_meta (key, value) VALUES ('x', 'y')"))
    finally:
        engine.dispose()


def test_a_reader_in_the_middle_of_a_page_does_not_hold_up_the_daemons_writes(
    make_rig: RigFactory, sqlite_url: str
) -> None:
    rig = make_rig(db_url=sqlite_url)
    rig.plan("swap", name="a")
    engine = open_reader(sqlite_url)
    try:
        with engine.connect() as conn, conn.begin():
            assert conn.execute(text("SELECT count(*) FROM plans")).scalar_one() == 1
            # the daemon's BEGIN IMMEDIATE goes through while the page's read is open
            with transaction(rig.factory) as session:
                session.execute(text("UPDATE plans SET description = 'x'"))
            assert conn.execute(text("SELECT description FROM plans")).scalar_one() is None
    finally:
        engine.dispose()


def test_bidi_overrides_from_plans_and_the_api_are_shown_as_escapes(web: Web) -> None:
    """U+202E in a plan's description (a plan file) and a run's error (the API's
    words): the page and the script's ``text`` maps show ``\\u202e``, never the
    control itself; the raw JSON fields keep the data as stored, for scripts."""
    rlo = "\u202e"
    rig = web.rig
    swap = rig.plan("swap", name="buy-sol", schedule={"every": 3600})
    describe(rig, "buy-sol", f"monthly {rlo}exe.txt")
    outcome = rig.runner().fire(swap, datetime.now(UTC).replace(microsecond=0))
    assert outcome is not None
    with transaction(rig.factory) as session:
        session.execute(text("UPDATE runs SET error = :e WHERE id = :i"),
                        {"e": f"route {rlo}deliaf", "i": outcome.run_id})  # fmt: skip
    page = web.get("/").text
    assert rlo not in page
    assert "monthly \\u202eexe.txt" in page
    assert "route \\u202edeliaf" in page
    (plan,) = web.json("/api/plans")["plans"]
    assert plan["text"]["description"] == "monthly \\u202eexe.txt"
    assert plan["description"] == f"monthly {rlo}exe.txt"
    (run,) = web.json("/api/runs")["runs"]
    assert run["text"]["error"] == "route \\u202edeliaf"
