"""The status page's chart (`/charts/NAME.svg`) and its fills (`/api/plans/NAME/fills`)
of a plan moved to another wallet: the same figures as the plan's card, its current
wallet's (none until it runs there), never the earlier wallet's fills shown as the
plan's current ones; the fills say whose they are. The earlier wallet's money stays
on the card among the other pairs, led by its name. Real runs over loopback to the
emulator, signed by two real keypairs, on SQLite; the page over loopback HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from jupcron.domain import RunStatus
from jupcron.listen.metrics import Metrics
from jupcron.listen.server import start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from jupcron.web.views import ReportCache
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_report_wallet_of_each_run import SLOT, move
from tests.integration.test_wallets_runs import two_wallets
from tests.integration.test_web_api import Web, live
from tests.support import stopping


@pytest.fixture
def page(make_rig: RigFactory) -> Iterator[Web]:
    rig = make_rig(loopback=True)
    engine = open_reader(str(rig.engine.url))
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity())
    app.reports = ReportCache(ttl=0.0)  # each request reads the store afresh
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield Web(rig, server)
    stopping.later(server.stop, engine.dispose)


def test_a_moved_plans_chart_and_fills_are_its_current_wallets(page: Web) -> None:
    rig = page.rig
    _, _, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)
    first = outcome_of(runner.fire(rig.plan("swap", name="weekly"), SLOT))
    assert first.status is RunStatus.SUCCEEDED
    before = page.json("/api/plans/weekly/fills")
    assert len(before["fills"]) == 1
    assert before.get("wallet", "default") == "default"

    moved = move(rig, "weekly", "savings")
    (card,) = page.json("/api/plans")["plans"]
    assert (card["money"]["wallet"], card["money"]["fills"], card["chart"]) == ("savings", 0, None)
    fills = page.json("/api/plans/weekly/fills")
    assert fills["fills"] == [], (
        f"the fills of plan weekly, now of wallet savings, are wallet default's: {fills}"
    )
    assert fills["wallet"] == "savings"
    chart = page.get("/charts/weekly.svg").text
    assert "no fills yet" in chart, "the chart draws wallet default's fill as the plan's"

    # its first run with savings: the chart and the fills are that run's, savings'
    second = outcome_of(runner.fire(moved, SLOT + timedelta(days=7)))
    assert second.status is RunStatus.SUCCEEDED
    (card,) = page.json("/api/plans")["plans"]
    assert (card["money"]["wallet"], card["money"]["fills"]) == ("savings", 1)
    fills = page.json("/api/plans/weekly/fills")
    assert fills["wallet"] == "savings"
    assert [f["in_amount"] for f in fills["fills"]] == [str(rig.run(second.run_id).in_amount)]
    assert "no fills yet" not in page.get("/charts/weekly.svg").text
