"""The status page's daemon view on SQLite and PostgreSQL: every daemon from the
heartbeats (this one marked, a standby peer and a stale node said so), the pauses
(every plan's and each plan's own), and the JSON twins agreeing with what
`jupcron status --format json` prints from the same store (`status.as_json`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, text

from jupcron.config import Config
from jupcron.emulator.faults import FaultKind
from jupcron.listen.metrics import Metrics
from jupcron.listen.page import LiveState
from jupcron.listen.server import Listener, start_listener
from jupcron.service.heartbeat import Heartbeat
from jupcron.store import control
from jupcron.store import status as store_status
from jupcron.store.control import NodeBeat
from jupcron.store.engine import begin, open_reader, session_factory
from jupcron.store.port import ALL_PLANS
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.runner import Rig, RigFactory, outcome_of
from tests.support import stopping
from tests.support.agree import agreeing

HOSTILE_REASON = '<img src=x onerror="alert(3)"><b>oops</b> & "more"'
THIS, PEER, GONE = "web-host:100", "peer-host:200", "old-host:300"


class PinnableClock:
    """The page's clock: the real one, or a moment a test holds it at."""

    def __init__(self) -> None:
        self.pinned: datetime | None = None

    def __call__(self) -> datetime:
        return self.pinned or datetime.now(UTC)


class Site:
    def __init__(self, rig: Rig, server: Listener, clock: PinnableClock) -> None:
        self.rig, self.server, self.clock = rig, server, clock

    def get(self, path: str) -> httpx.Response:
        answer = httpx.get(self.server.url + path, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer

    def json(self, path: str) -> Any:
        return self.get(path).json()


@pytest.fixture
def site(make_rig: RigFactory, db_url: str) -> Iterator[Site]:
    rig = make_rig(db_url=db_url)
    engine = open_reader(db_url)
    clock = PinnableClock()
    app = WebApp(engine, metrics=Metrics(), activity=Activity(),
                 live=lambda: LiveState(node=THIS, rate_limit=2.0, wallet="WALLET"),
                 clock=clock)  # fmt: skip
    server = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    yield Site(rig, server, clock)
    stopping.later(server.stop, engine.dispose)  # behind the test, in this order


def beat(engine: Engine, node: str, role: str, at: datetime, **extra: Any) -> None:
    values: dict[str, Any] = {"dry_run": False, "kill_switch": None, "version": "0.1.0", **extra}
    with begin(engine) as conn:
        control.beat(conn, NodeBeat(node=node, role=role, role_since=at - timedelta(minutes=5),
                                    started_at=at - timedelta(hours=1), last_beat=at, **values))  # fmt: skip


def cli_json(rig: Rig, now: datetime) -> dict[str, Any]:
    """What `jupcron status --format json` prints about this store (its function,
    on a session of its own), as of `now`."""
    with session_factory(rig.engine)() as session:
        return store_status.as_json(store_status.read(session, now))


def test_every_daemon_pauses_and_the_same_values_as_jupcron_status(site: Site) -> None:
    rig = site.rig
    for name in ("alpha", "beta", "gamma"):
        rig.plan("swap", name=name, schedule={"every": 3600})
    slot = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    outcome = rig.runner().fire(rig.plan("swap", name="delta", schedule={"every": 60}), slot)
    assert outcome is not None
    now = datetime.now(UTC)
    beat(rig.engine, THIS, "leader", now, dry_run=True)
    beat(rig.engine, PEER, "standby", now, kill_switch="kill switch is on (safety.kill_switch)")
    beat(rig.engine, GONE, "leader", now - timedelta(minutes=10))  # crashed: stopped beating
    with begin(rig.engine) as conn:
        control.pause(conn, [ALL_PLANS], reason=HOSTILE_REASON, by="ann", now=now)
        control.pause(conn, ["beta"], reason=None, by="bob", now=now)

    status = site.json("/api/status")
    nodes = [(d["node"], d["role"], d["running"], d["this"]) for d in status["daemons"]]
    assert nodes == [(THIS, "leader", True, True), (PEER, "standby", True, False),
                     (GONE, "leader", False, False)]  # fmt: skip
    assert (status["node"], status["role"], status["leader"]) == (THIS, "leader", THIS)
    assert status["dry_run"] is True
    assert status["kill_switch"] == "kill switch is on (safety.kill_switch)"
    text = {d["node"]: d["text"] for d in status["daemons"]}
    assert text[THIS]["this"] == "this page's daemon"
    assert text[PEER]["role"] == "standby"
    assert text[GONE]["role"].startswith("not running")
    assert [(p["plan"], p["all"], p["reason"], p["by"]) for p in status["pauses"]] == [
        (None, True, HOSTILE_REASON, "ann"), ("beta", False, None, "bob")]  # fmt: skip
    assert status["text"]["paused"] == f"ALL PLANS: {HOSTILE_REASON}; 1 plan by name"

    plans = {p["name"]: p for p in site.json("/api/plans")["plans"]}
    assert plans["beta"]["paused"] == "paused: no reason given (by bob; jupcron resume beta)"
    assert plans["alpha"]["paused"].startswith(f"all plans paused: {HOSTILE_REASON} (by ann;")
    assert plans["delta"]["last_run_id"] == outcome.run_id
    assert plans["delta"]["last_status"] == str(outcome.status)

    # the twins and `jupcron status --format json` say the same where they overlap, read
    # at one moment (a plan's next fire is worked out from it: reads a second apart
    # could fall either side of a slot)
    site.clock.pinned = datetime.now(UTC)
    cli = cli_json(rig, site.clock.pinned)
    web = site.json("/api/status")
    del cli["now"]  # each its own moment
    cli_plans = cli.pop("plans")
    agreeing(web, cli, "status")
    agreeing(site.json("/api/plans")["plans"], cli_plans, "plans")
    site.clock.pinned = None

    # the page shows all of it, a hostile reason as text
    page = site.get("/").text
    assert HOSTILE_REASON not in page
    assert "&lt;img src=x onerror=&#34;alert(3)&#34;&gt;&lt;b&gt;oops&lt;/b&gt;" in page
    assert f'data-node="{PEER}" data-role="standby"' in page
    assert f'data-node="{GONE}" data-role="stale"' in page
    assert f'data-node="{THIS}" data-role="leader" data-this="yes"' in page
    assert 'id="pauses" hidden' not in page
    assert 'id="badge-paused" hidden' not in page

    with begin(rig.engine) as conn:
        control.resume(conn, [ALL_PLANS, "beta"])
    assert site.json("/api/status")["pauses"] == []
    assert all(p["paused"] is None for p in site.json("/api/plans")["plans"])
    page = site.get("/").text
    assert 'id="pauses" hidden' in page
    assert 'id="badge-paused" hidden' in page


def test_without_a_heartbeat_nothing_is_claimed(site: Site) -> None:
    site.rig.plan("swap", name="alpha")
    status = site.json("/api/status")
    assert (status["running"], status["daemons"], status["role"]) == (False, [], None)
    assert (status["dry_run"], status["kill_switch"]) == (None, None)
    assert status["text"]["dry_run"] == "unknown: no daemon is running"
    assert status["text"]["kill_switch"] == "unknown: no daemon is running"


def test_a_heartbeat_is_written_at_once_when_dry_run_or_the_kill_switch_changes(
    site: Site, tmp_path: Any
) -> None:
    """A config reload shows on the page within a loop turn, not a beat later."""
    rig = site.rig
    clock = [100.0]
    heart = Heartbeat(rig.engine, node=THIS, started_at=datetime.now(UTC), version="x",
                      interval=3600, monotonic=lambda: clock[0])  # fmt: skip
    since = datetime.now(UTC)
    calm = Config.model_validate({})
    switch = tmp_path / "STOP"
    heart.tick(leader=True, role_since=since, config=calm)
    assert site.json("/api/status")["dry_run"] is False
    dry = Config.model_validate({"safety": {"dry_run": True, "kill_switch_file": str(switch)}})
    heart.tick(leader=True, role_since=since, config=dry)  # the interval has not passed
    assert site.json("/api/status")["dry_run"] is True
    switch.write_text("")
    heart.tick(leader=True, role_since=since, config=dry)
    assert site.json("/api/status")["kill_switch"] == f"kill switch file {switch} exists"


def test_run_errors_of_the_last_hour_count_every_run_in_the_store(site: Site) -> None:
    """Three rejected runs fired by another process (not this daemon's listener) and
    one from two hours ago: the page counts the three."""
    rig = site.rig
    rig.emulator.faults.add(FaultKind.HOSTILE, operation="ultra_order", count=0)
    now = datetime.now(UTC).replace(microsecond=0)
    for n in range(3):
        plan = rig.plan("swap", name=f"hostile-{n}")
        assert outcome_of(rig.runner().fire(plan, now)).status.value == "rejected"
    old = rig.plan("swap", name="old")
    run = outcome_of(rig.runner().fire(old, now - timedelta(hours=2)))
    with begin(rig.engine) as conn:
        conn.execute(text("UPDATE runs SET updated_at = :at WHERE id = :id"),
                     {"at": now - timedelta(hours=2), "id": run.run_id})  # fmt: skip
    status = site.json("/api/status")
    assert status["errors_last_hour"]["runs"] == 3
    assert "3 runs" in site.get("/").text


def test_the_page_shows_which_daemon_leads_which_wallet(site: Site) -> None:
    """Issue 31 item 2: the heartbeat's led wallets, in the twin and on the page."""
    now = datetime.now(UTC)
    beat(site.rig.engine, THIS, "leader", now, wallets=("default", "w2"))
    beat(site.rig.engine, PEER, "leader", now, wallets=("w1",))
    status = site.json("/api/status")
    by_node = {d["node"]: (d["wallets"], d["text"]["wallets"]) for d in status["daemons"]}
    assert by_node == {THIS: (["default", "w2"], "default, w2"), PEER: (["w1"], "w1")}
    page = site.get("/").text
    assert "<th>wallets led</th>" in page
    assert '<td class="mono" data-k="wallets">default, w2</td>' in page
    assert '<td class="mono" data-k="wallets">w1</td>' in page
