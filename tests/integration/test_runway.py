"""The runway watch against the emulator's portfolio twin, on SQLite and PostgreSQL:
a wallet short of its plans' input mint gives exactly one ``low_balance`` message at
a real local HTTP receiver (through Apprise's json:// channel), again only after it
recovered and fell again; `jupcron status` (table and JSON), the status page, its
/api/status twin and /metrics show the runway; an API that does not answer shows an
unknown balance (never 0) and alerts nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from jupcron.api.client import JupiterClient
from jupcron.cli.main import cli
from jupcron.config import Config
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import Listener, start_listener
from jupcron.service.alerts import Alerts
from jupcron.service.apprise_channel import apprise_sender
from jupcron.service.runway import RunwayWatch
from jupcron.store.engine import open_reader
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.receivers import HttpReceiver, wait_for
from tests.fixtures.runner import USDC, Rig, RigFactory

HOURLY = {"every": "1h"}


@dataclass
class Watched:
    rig: Rig
    watch: RunwayWatch
    alerts: Alerts
    metrics: Metrics
    site: Listener
    receiver: HttpReceiver
    config_file: Path

    @property
    def wallet(self) -> str:
        return str(self.rig.wallet.address)

    def low_messages(self) -> list[str]:
        return [b["message"] for b in self.receiver.bodies if "[low_balance]" in b["message"]]

    def status(self, *args: str) -> str:
        result = CliRunner().invoke(cli, ["--config", str(self.config_file), "status", *args])
        assert result.exit_code == 0, result.output
        return result.output

    def get(self, path: str) -> str:
        answer = httpx.get(self.site.url + path, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.text


@pytest.fixture
def watched(
    make_rig: RigFactory, db_url: str, http_receiver: HttpReceiver, tmp_path: Path
) -> Iterator[Watched]:
    rig = make_rig(db_url=db_url)
    config = rig.config.model_copy(
        update={"runway": Config.model_validate({"runway": {"alert_below": 3}}).runway}
    )
    # a client that does not wait out its retries (the emulator answers at once)
    api = JupiterClient(rig.url, api_key=None, transport=rig.transport, rate_limit=1000,
                        sleep=lambda s: None)  # fmt: skip
    metrics = Metrics()
    alerts = Alerts(apprise_sender([http_receiver.url]), batch=0, min_interval=0,
                    on_result=metrics.record_notifications).start()  # fmt: skip
    watch = RunwayWatch(rig.engine, api, str(rig.wallet.address), config=lambda: config,
                        gauges=metrics.runway, alert=alerts.note)  # fmt: skip
    reader = open_reader(db_url)
    app = WebApp(reader, metrics=metrics, activity=Activity(),
                 live=lambda: LiveState(node="here:1", rate_limit=2.0,
                                        wallet=str(rig.wallet.address)))  # fmt: skip
    site = start_listener(metrics, "127.0.0.1:0", app=app, key="web.listen")
    config_file = tmp_path / "status.yaml"
    config_file.write_text(json.dumps({"database": {"url": db_url},
                                       "plans": {"dir": str(tmp_path / "no-plans")}}))  # fmt: skip
    try:
        yield Watched(rig, watch, alerts, metrics, site, http_receiver, config_file)
    finally:
        site.stop()
        alerts.stop()
        reader.dispose()
        api.close()


def swap(rig: Rig, name: str, amount: int) -> None:
    request = {"inputMint": USDC, "outputMint": "So11111111111111111111111111111111111111112",
               "amount": amount}  # fmt: skip
    rig.plan("swap", request, name=name, schedule=HOURLY)


def metric(text: str, name: str, mint: str = USDC) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{") and mint in line]


def test_a_low_wallet_is_said_once_and_shown_everywhere(watched: Watched) -> None:
    rig = watched.rig
    swap(rig, "hourly-a", 5_000_000)  # 5 USDC an hour
    swap(rig, "hourly-b", 2_000_000)  # 2 USDC an hour, at the same times
    rig.emulator.ledger.set_balance(watched.wallet, USDC, 10_000_000)  # 10 USDC
    for _ in range(3):  # three reads, one fall: one message
        (state,) = watched.watch.check()
    assert state.low
    assert state.runway.balance == 10_000_000
    assert state.runway.runs == 2  # the first hour's 5 + 2; the next hour's 5 is short
    assert wait_for(lambda: watched.low_messages(), timeout=20)
    (message,) = watched.low_messages()
    assert f"wallet {watched.wallet}: 10 USDC covers 2 of the next" in message
    assert "(alert below 3)" in message
    assert "(plans: hourly-a, hourly-b)" in message

    table = watched.status()
    assert "runway (1, per wallet and input mint)" in table
    assert "10 USDC" in table
    assert "LOW (alert below 3)" in table
    (shown,) = json.loads(watched.status("--format", "json"))["runway"]
    assert shown["balance"] == "10000000"
    assert shown["balance_ui"] == "10"
    assert (shown["runs"], shown["low"], shown["mint"]) == (2, True, USDC)
    (twin,) = json.loads(watched.get("/api/status"))["runway"]
    assert {k: twin[k] for k in shown if k != "text"} == shown
    page = watched.get("/")
    assert 'data-low="yes"' in page
    assert "10 USDC" in page
    scrape = watched.get("/metrics")
    assert metric(scrape, "jupcron_wallet_balance") == [
        f'jupcron_wallet_balance{{mint="{USDC}",symbol="USDC",wallet="{watched.wallet}"}} 10.0'
    ]
    assert metric(scrape, "jupcron_runway_runs")[0].endswith(" 2.0")
    assert metric(scrape, "jupcron_runway_low")[0].endswith(" 1.0")
    assert metric(scrape, "jupcron_balance_known")[0].endswith(" 1.0")

    # topped up: recovered, nothing said; spent again: said again, once
    rig.emulator.ledger.set_balance(watched.wallet, USDC, 10_000 * 10**6)
    (state,) = watched.watch.check()
    assert not state.low
    rig.emulator.ledger.set_balance(watched.wallet, USDC, 0)
    watched.watch.check()
    watched.watch.check()
    assert wait_for(lambda: len(watched.low_messages()) == 2, timeout=20)
    assert "0 USDC covers 0 of the next" in watched.low_messages()[1]

    def counted() -> list[str]:
        return [line for line in watched.get("/metrics").splitlines()
                if line.startswith("jupcron_notifications_total{")]  # fmt: skip

    want = ['jupcron_notifications_total{event="low_balance",result="sent"} 2.0']
    assert wait_for(lambda: counted() == want, timeout=10), counted()


def test_an_api_that_does_not_answer_is_unknown_never_zero_and_alerts_nothing(
    watched: Watched,
) -> None:
    rig = watched.rig
    swap(rig, "hourly", 5_000_000)
    rig.emulator.ledger.set_balance(watched.wallet, USDC, 10_000 * 10**6)  # 30 days and more
    (state,) = watched.watch.check()
    assert not state.low
    assert state.runway.covers_all
    rig.emulator.faults.add("server_error", count=0, operation="positions", status=503)
    (state,) = watched.watch.check()
    assert state.runway.balance is None
    assert state.runway.runs is None
    assert not state.low
    assert "503" in (state.runway.problem or "")
    (shown,) = json.loads(watched.status("--format", "json"))["runway"]
    assert shown["balance"] is None
    assert shown["runs"] is None
    assert shown["summary"].startswith("unknown (balance unknown:")
    assert "unknown" in watched.status()
    scrape = watched.get("/metrics")
    assert metric(scrape, "jupcron_wallet_balance") == []  # absent, not 0
    assert metric(scrape, "jupcron_runway_runs") == []
    assert metric(scrape, "jupcron_balance_known")[0].endswith(" 0.0")
    assert ">unknown<" in watched.get("/")
    # an empty wallet behind an API that does not answer: still nothing said
    rig.emulator.ledger.set_balance(watched.wallet, USDC, 0)
    watched.watch.check()
    watched.alerts.stop()  # delivers anything pending
    assert watched.low_messages() == []
    # the API back: now the empty wallet is said
    rig.emulator.faults.clear()
    (state,) = watched.watch.check()
    assert state.low


def test_a_runway_turned_off_by_a_reload_leaves_nothing_stale(watched: Watched) -> None:
    swap(watched.rig, "hourly", 5_000_000)
    assert len(watched.watch.check()) == 1
    assert metric(watched.get("/metrics"), "jupcron_runway_runs")
    off = watched.rig.config.model_copy(
        update={"runway": Config.model_validate({"runway": {"enabled": False}}).runway}
    )
    later = RunwayWatch(watched.rig.engine, watched.watch.api, watched.wallet,
                        config=lambda: off, gauges=watched.metrics.runway)  # fmt: skip
    assert later.check() == []
    assert json.loads(watched.status("--format", "json"))["runway"] == []
    assert metric(watched.get("/metrics"), "jupcron_runway_runs") == []


def test_the_store_groups_plans_alike_for_the_runway(db_url: str, tmp_path: Path) -> None:
    """100,000 plans on a few schedules are read as a few groups (the first by name and
    a count), on SQLite and PostgreSQL; paused names are left out; the needs are those
    of every plan counted alone."""
    from jupcron.plans.apply import apply_paths
    from jupcron.scheduling.runway import needs_of, runway
    from jupcron.store import plans as store_plans
    from jupcron.store.engine import make_engine, session_factory
    from tests.fixtures.plans import swap_plan, write_plans

    folder = tmp_path / "plans"
    folder.mkdir()
    plans = [swap_plan(f"p{i:02d}", every="1h" if i % 3 else "1d") for i in range(30)]
    plans[5]["request"]["amount"] = 7
    write_plans(folder / "p.yaml", plans)
    engine = make_engine(db_url)
    try:
        factory = session_factory(engine)
        apply_paths(factory, [folder], now=datetime.now(UTC))
        with factory() as session:
            groups = list(store_plans.enabled_alike(session, ["p01"]))
            every = store_plans.enabled_plans(session)
    finally:
        engine.dispose()
    counts = {plan.name: n for plan, n in groups}
    assert counts == {"p00": 10, "p02": 18, "p05": 1}  # 1d, 1h (p01 paused, p05 apart)
    wallet = "W"
    alone = needs_of([p for p in every if p.name != "p01"], wallet)
    grouped = needs_of(groups, wallet)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    mint = alone[0].mint
    one = runway(wallet, mint, 10**9, alone, now, timedelta(days=2))
    other = runway(wallet, mint, 10**9, grouped, now, timedelta(days=2))
    assert (one.runs, one.upcoming, one.needed) == (other.runs, other.upcoming, other.needed)
