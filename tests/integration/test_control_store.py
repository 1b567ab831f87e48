"""Pauses, heartbeats and the status reads (migration 0004_control) on both
backends; the runner skips a paused plan's slot with the reason, through the
run store's cached copy of the pauses."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session

from jupcron.domain import RunStatus
from jupcron.store import control
from jupcron.store import status as store_status
from jupcron.store.control import STALE_AFTER, NodeBeat
from jupcron.store.engine import begin, make_engine, session_factory, transaction
from jupcron.store.models import Plan
from jupcron.store.port import ALL_PLANS
from jupcron.store.records import PlanRecord
from jupcron.store.runstore import SqlRunStore
from tests.fixtures.runner import RigFactory, outcome_of
from tests.fixtures.runs import record_run, stored_plan

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
SWAP = {
    "inputMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "outputMint": "So11111111111111111111111111111111111111112",
    "amount": 1_000_000,
}


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    made = make_engine(db_url)
    yield made
    made.dispose()


def add_plan(engine: Engine, name: str, enabled: bool = True) -> PlanRecord:
    return stored_plan(engine, name, now=NOW, enabled=enabled)


def test_pause_replace_and_resume(engine: Engine) -> None:
    add_plan(engine, "weekly")
    with begin(engine) as conn:
        first = control.pause(conn, ["weekly"], reason="wrong amount", by="ann", now=NOW)
        again = control.pause(
            conn, ["weekly", ALL_PLANS], reason="incident", by="bob", now=NOW + timedelta(1)
        )
        found = control.pauses(conn)
    assert first == {"weekly": None}
    assert again["weekly"] is not None
    assert again["weekly"].reason == "wrong amount"
    assert again[ALL_PLANS] is None
    assert [(p.scope, p.reason, p.by) for p in found] == [
        (ALL_PLANS, "incident", "bob"), ("weekly", "incident", "bob"),
    ]  # fmt: skip
    assert found[1].at == NOW + timedelta(1)
    # the plan's own pause first, else the every-plan one
    assert control.pause_in_effect(found, "weekly") == found[1]
    assert control.pause_in_effect(found, "other") == found[0]
    with begin(engine) as conn:
        lifted = control.resume(conn, [ALL_PLANS, "never-paused"])
        left = control.pauses(conn)
    assert [p.scope for p in lifted] == [ALL_PLANS]
    assert [p.scope for p in left] == ["weekly"]
    assert control.pause_in_effect(left, "other") is None


def test_pausing_again_without_a_reason_keeps_the_reason(engine: Engine) -> None:
    add_plan(engine, "weekly")  # on SQLite and on PostgreSQL
    with begin(engine) as conn:
        control.pause(conn, ["weekly"], reason="wrong amount", by="ann", now=NOW)
        again = control.pause(conn, ["weekly"], reason=None, by="bob", now=NOW + timedelta(1))
        (kept,) = control.pauses(conn)
        control.pause(conn, ["weekly"], reason="new", by="cy", now=NOW + timedelta(2))
        (replaced,) = control.pauses(conn)
    assert again["weekly"] is not None
    assert (kept.reason, kept.by, kept.at) == ("wrong amount", "bob", NOW + timedelta(1))
    assert (replaced.reason, replaced.by) == ("new", "cy")


def test_unknown_plans_are_named_in_order(engine: Engine) -> None:
    add_plan(engine, "a")
    add_plan(engine, "b", enabled=False)
    with begin(engine) as conn:
        assert control.unknown_plans(conn, ["z", "a", "b", "y", "z"]) == ["z", "y"]
        assert control.unknown_plans(conn, []) == []


def beat(node: str, role: str, at: datetime, **over: object) -> NodeBeat:
    values: dict[str, object] = {
        "node": node, "role": role, "role_since": NOW, "started_at": NOW, "last_beat": at,
        "dry_run": False, "kill_switch": None, "version": "1.0",
    }  # fmt: skip
    values.update(over)
    return NodeBeat(**values)  # type: ignore[arg-type]


def test_heartbeats_upsert_go_stale_and_are_forgotten(engine: Engine) -> None:
    with begin(engine) as conn:
        control.beat(conn, beat("h:1", "standby", NOW - timedelta(days=2)))  # long gone
        control.beat(conn, beat("h:3", "standby", NOW))
        control.beat(conn, beat("h:2", "leader", NOW))
        control.beat(conn, beat("h:3", "standby", NOW + timedelta(seconds=2), dry_run=True,
                                kill_switch="kill switch file /x exists"))  # fmt: skip
        found = control.nodes(conn)
    # h:1 was dropped by the later beats (stale for over a day); leader first
    assert [(n.node, n.role) for n in found] == [("h:2", "leader"), ("h:3", "standby")]
    standby = found[1]
    assert standby.dry_run is True
    assert standby.kill_switch == "kill switch file /x exists"
    assert standby.last_beat == NOW + timedelta(seconds=2)
    assert standby.running(NOW + STALE_AFTER)
    assert not standby.running(NOW + timedelta(seconds=3) + STALE_AFTER)
    with begin(engine) as conn:
        control.forget_node(conn, "h:2")
        assert [n.node for n in control.nodes(conn)] == ["h:3"]


def test_status_reads_plans_runs_pauses_and_daemons(engine: Engine) -> None:
    weekly, idle = add_plan(engine, "weekly"), add_plan(engine, "idle")
    off = add_plan(engine, "off")  # disabled below, after its run
    factory = session_factory(engine)
    statuses = [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.SUBMITTED]
    ids = []
    for hour, wanted in enumerate(statuses):
        run_id = record_run(engine, weekly, NOW + timedelta(hours=hour), now=NOW, status=wanted,
                            error="boom" if wanted is RunStatus.FAILED else None)  # fmt: skip
        assert run_id is not None
        ids.append(run_id)
    doubt = record_run(engine, off, NOW, now=NOW, status=RunStatus.IN_DOUBT, signature="Sig1",
                       error="could not settle")  # fmt: skip
    assert doubt is not None
    with transaction(factory) as session:  # `plans apply` disabled it since
        row = session.get(Plan, off.id)
        assert row is not None
        row.enabled, row.version = False, row.version + 1
    with begin(engine) as conn:
        control.pause(conn, ["idle"], reason="testing", by="ann", now=NOW)
        control.beat(conn, beat("h:9", "leader", NOW))
    with factory() as session:
        found = store_status.read(session, NOW + timedelta(seconds=5))
    plans = {p.name: p for p in found.plans}
    assert list(plans) == ["idle", "off", "weekly"]
    # the newest run per plan (one query), whatever its status
    last = plans["weekly"].last
    assert last is not None
    assert (last.run_id, last.status) == (ids[2], RunStatus.SUBMITTED)
    assert plans["idle"].last is None
    assert plans["weekly"].next_fire == NOW + timedelta(hours=1)
    assert plans["off"].next_fire is None  # disabled
    pause = plans["idle"].pause
    assert pause is not None
    assert pause.skip_reason().startswith("paused: testing")
    assert plans["weekly"].pause is None
    assert [r.run_id for r in found.in_flight.runs] == [ids[2]]
    assert found.in_flight.count == 1
    doubted = found.in_doubt.runs[0]
    assert (doubted.plan_name, doubted.signature) == ("off", "Sig1")
    assert doubted.settle == f"jupcron settle {doubt} --landed|--not-landed --reason TEXT"
    assert found.leader is not None
    assert found.leader.node == "h:9"
    data = store_status.as_json(found)
    assert data["running"] is True
    assert data["dry_run"] is False
    assert data["in_doubt"][0]["settle"] == doubted.settle
    assert idle.id != weekly.id
    # the same store an hour later: the heartbeat is stale, nothing is running
    with factory() as session:
        later = store_status.read(session, NOW + timedelta(hours=1))
    assert later.running == ()
    assert later.leader is None
    assert store_status.as_json(later)["dry_run"] is None


def count_selects(engine: Engine) -> list[str]:
    seen: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _seen(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)

    return seen


def test_status_reads_in_a_fixed_number_of_queries(engine: Engine) -> None:
    plans = [add_plan(engine, f"p{n:03}") for n in range(40)]
    for plan in plans:
        record_run(engine, plan, NOW, now=NOW)
    seen = count_selects(engine)
    with Session(engine) as session:
        found = store_status.read(session, NOW)
    assert len(found.plans) == 40
    assert all(p.last is not None for p in found.plans)
    assert len(seen) <= 9, seen  # not one per plan (the runways: one query of their own)


def test_the_runner_skips_a_paused_plan_with_the_reason(make_rig: RigFactory) -> None:
    rig = make_rig()
    plan, other = rig.plan("swap", name="weekly"), rig.plan("swap", name="other")
    ticks = [0.0]
    store = SqlRunStore(rig.engine, pause_ttl=0.5, monotonic=lambda: ticks[0])
    runner = rig.runner(store=store)
    slot = datetime.now(UTC) + timedelta(days=1)
    assert outcome_of(runner.fire(plan, slot)).status is RunStatus.SUCCEEDED
    with begin(rig.engine) as conn:
        control.pause(conn, ["weekly"], reason="bad price", by="ann", now=NOW)
    # within the copy's lifetime the store still serves what it read
    assert outcome_of(runner.fire(plan, slot + timedelta(hours=1))).status is RunStatus.SUCCEEDED
    ticks[0] = 0.5  # the copy is due: the next run reads the pause
    skipped = outcome_of(runner.fire(plan, slot + timedelta(hours=2)))
    assert skipped.status is RunStatus.SKIPPED
    assert skipped.error == "paused: bad price (by ann; jupcron resume weekly)"
    assert outcome_of(runner.fire(other, slot)).status is RunStatus.SUCCEEDED
    issued = rig.issued()
    with begin(rig.engine) as conn:
        control.pause(conn, [ALL_PLANS], reason=None, by="bob", now=NOW)
        control.resume(conn, ["weekly"])
    ticks[0] = 1.0
    every = outcome_of(runner.fire(other, slot + timedelta(hours=1)))
    assert every.status is RunStatus.SKIPPED
    assert every.error == "all plans paused: no reason given (by bob; jupcron resume --all)"
    assert rig.issued() == issued  # a skipped slot asks the API for nothing
    assert "preflight_skip" in rig.steps(every.run_id)


def test_a_degraded_daemon_says_why_in_status_until_it_recovers(engine: Engine) -> None:
    """Issue 28 item 3: what a daemon runs without travels in its heartbeat to
    `jupcron status` (table and JSON); its recovery is written at once, not a beat later."""
    from jupcron.cli.status import table
    from jupcron.config import Config
    from jupcron.service.heartbeat import Heartbeat

    config = Config()
    started = datetime.now(UTC)
    heart = Heartbeat(engine, node="h:7", started_at=started, version="t", interval=3600)
    why = "rpc: http://127.0.0.1:9/*** did not answer (fix: check rpc.url)"
    heart.tick(leader=True, role_since=started, config=config, degraded=why)

    def read() -> store_status.Status:
        with session_factory(engine)() as session:
            return store_status.read(session, datetime.now(UTC))

    found = read()
    assert store_status.as_json(found)["daemons"][0]["degraded"] == why
    assert f"DEGRADED: {why}" in table(found, config)
    heart.tick(leader=True, role_since=started, config=config, degraded=None)  # recovered
    found = read()
    assert store_status.as_json(found)["daemons"][0]["degraded"] is None
    assert "DEGRADED" not in table(found, config)


def test_the_led_wallets_travel_in_the_heartbeat_to_status(engine: Engine) -> None:
    """Issue 31 item 2: which daemon leads which wallet, in `jupcron status` (table and
    JSON); a change of the led set is written at once, not a beat later."""
    from jupcron.cli.status import table
    from jupcron.config import Config
    from jupcron.service.heartbeat import Heartbeat

    config = Config()
    started = datetime.now(UTC)
    first = Heartbeat(engine, node="h:1", started_at=started, version="t", interval=3600)
    second = Heartbeat(engine, node="h:2", started_at=started, version="t", interval=3600)
    first.tick(leader=True, role_since=started, config=config, wallets=frozenset({"bob", "al"}))
    second.tick(leader=False, role_since=started, config=config, wallets=frozenset())

    def read() -> store_status.Status:
        with session_factory(engine)() as session:
            return store_status.read(session, datetime.now(UTC))

    found = read()
    by_node = {d["node"]: d["wallets"] for d in store_status.as_json(found)["daemons"]}
    assert by_node == {"h:1": ["al", "bob"], "h:2": []}
    text = table(found, config)
    assert "wallets: al, bob" in text
    assert "wallets: none" in text
    second.tick(leader=True, role_since=started, config=config, wallets=frozenset({"bob"}))
    first.tick(leader=True, role_since=started, config=config, wallets=frozenset({"al"}))
    by_node = {d["node"]: d["wallets"] for d in store_status.as_json(read())["daemons"]}
    assert by_node == {"h:1": ["al"], "h:2": ["bob"]}
