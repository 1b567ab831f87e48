"""The status page's "other pairs" line says the landed swaps no answer measured, as
the card's main row does: a plan that spent 5 USDC measured and 5 USDC unmeasured with
its earlier wallet (it moved since) showed "[default] 5 USDC → … (1 fill, …)" while
10 USDC had left that wallet. SQLite, the emulator in process, the real runner and
settle; the page over loopback HTTP."""

from __future__ import annotations

import httpx

from jupcron.listen.metrics import Metrics
from jupcron.listen.server import start_listener
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.runner import RigFactory
from tests.integration.test_report_wallet_of_each_run import move
from tests.integration.test_review26c_unmeasured_in_csv import PLAN, _landed_unmeasured
from tests.integration.test_web_api import live
from tests.support import stopping


def test_the_other_pairs_line_says_the_unmeasured_spend(make_rig: RigFactory) -> None:
    rig, gave = _landed_unmeasured(make_rig)
    assert gave == 10_000_000  # 5 USDC measured, 5 USDC unmeasured
    move(rig, PLAN, "savings")
    engine = open_reader(str(rig.engine.url))
    app = WebApp(engine, metrics=Metrics(), live=live, activity=Activity())
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    try:
        answer = httpx.get(server.url + "/api/plans", timeout=10)
        page = httpx.get(server.url + "/", timeout=10).text
    finally:
        stopping.later(server.stop, engine.dispose)
    assert answer.status_code == 200, answer.text
    (card,) = answer.json()["plans"]
    (other,) = card["money"]["other_pairs"]
    assert (other["wallet"], other["spent"], other["unmeasured_spent"]) == (
        "default", "5000000", "5000000")  # fmt: skip
    line = card["text"]["other_pairs"]
    assert line.startswith("[default] 5 USDC (+5 USDC unmeasured) → "), (
        f"the other pairs line leaves out 5 USDC that left wallet default: {line!r}"
    )
    assert "1 fill, 1 landed with amounts unknown" in line
    assert line in page
