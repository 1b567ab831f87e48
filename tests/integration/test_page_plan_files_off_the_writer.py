"""The page's "plan files vs store" must cost the signing daemon nothing
of what its runs need.

The comparison (`files_vs_store`: every plan file read, every plan compared) takes
seconds at 100,000 plans. It was made for each `/api/status` request whose cache had
expired, on the daemon's *writer* engine, with no bound on how many ran at once:
several tabs (or anyone with the token) polling the page held that many writer
connections for seconds each — on SQLite each one a ``BEGIN IMMEDIATE`` (the write
lock), on PostgreSQL one of the pool the runner claims its runs from. A due run's
claim then waited, or failed.

Real pieces: the daemon's `Status` on a runtime from `build_runtime` (its writer
engine and its `SqlRunStore`), the real page (`WebApp` on an `open_reader` engine)
over loopback, real plan files, SQLite and the PostgreSQL fixture. The seconds one
comparison takes at scale are stood in for by a gate: a SQLAlchemy event holds each
page thread at the comparison's read of the stored plans until the test opens it, so
nothing here depends on how fast the machine is. The writer engine is the daemon's
(`make_engine`), only with a small pool and a short lock wait, so that a claim that
is held up fails at once instead of after 30 s.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, event

from jupcron.app import Runtime, build_runtime
from jupcron.chain.wallet import write_keypair_file
from jupcron.listen.metrics import Metrics
from jupcron.listen.server import Listener, start_listener
from jupcron.plans.apply import apply_paths
from jupcron.service.notify import Notifier
from jupcron.service.status import FILES_EVERY, Status
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, open_reader, session_factory
from jupcron.store.handle import Store
from jupcron.web.activity import Activity
from jupcron.web.app import WebApp
from tests.fixtures.plans import PlanFiles, swap_plan
from tests.fixtures.runner import config_for

TABS = 4  # page requests at once
POOL = 2  # the writer pool, small so that TABS can exhaust it
WAIT = 20.0  # seconds any wait here may last before the test fails (never reached when sound)


class Gate:
    """Holds each page thread at the comparison's read of the stored plans (where a
    100,000-plan comparison spends its seconds) until `open`."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.inside: set[int] = set()  # the threads held (each one comparison under way)
        self.opened = False

    def hook(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            return  # the test's own statements (the claim) pass
        text = statement.lstrip().upper()
        if not (text.startswith("SELECT") and "CONTENT_HASH" in text):
            return  # only `PlanSync`'s read of the stored plans (a diff)
        with self.cond:
            self.inside.add(threading.get_ident())
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.opened, timeout=WAIT)

    def open(self) -> None:
        with self.cond:
            self.opened = True
            self.cond.notify_all()


@dataclass
class Daemon:
    url: str  # the page
    status: Status
    runtime: Runtime
    folder: Path
    clock: list[float]
    gate: Gate
    writer_checkouts: list[str] = field(default_factory=list)  # by page threads

    @property
    def writer(self) -> Engine:
        return self.runtime.store.engine


@pytest.fixture
def daemon(db_url: str, tmp_path: Path, plan_files: PlanFiles) -> Iterator[Daemon]:
    folder = plan_files({"a.yaml": [swap_plan("due")]})
    applier = make_engine(db_url)
    apply_paths(session_factory(applier), [folder], now=datetime.now(UTC))
    applier.dispose()
    write_keypair_file(tmp_path / "main.json")
    config = config_for("http://127.0.0.1:9", db_url, plans={"dir": str(folder)},
                        wallet={"keypair": str(tmp_path / "main.json")})  # fmt: skip
    writer = make_engine(db_url, busy_ms=200, pool_size=POOL, max_overflow=0, pool_timeout=1)
    runtime = build_runtime(config, store=Store(writer, session_factory(writer)))
    clock = [1000.0]
    status = Status(config=lambda: config, metrics=Metrics(), notifier=Notifier({}),
                    degraded=list, monotonic=lambda: clock[0])  # fmt: skip
    status.runtime = runtime
    reader = open_reader(db_url)
    app = WebApp(reader, metrics=Metrics(), live=status.live_state, activity=Activity())
    server: Listener = start_listener(Metrics(), "127.0.0.1:0", app=app, key="web.listen")
    gate = Gate()
    found = Daemon(server.url, status, runtime, folder, clock, gate)

    def checkout(*_args: Any) -> None:
        if threading.current_thread() is not threading.main_thread():
            found.writer_checkouts.append(threading.current_thread().name)

    event.listen(writer, "checkout", checkout)
    event.listen(Engine, "before_cursor_execute", gate.hook)
    try:
        yield found
    finally:
        gate.open()
        event.remove(Engine, "before_cursor_execute", gate.hook)
        server.stop()
        reader.dispose()
        runtime.close()


def _edit_files(daemon: Daemon, count: int) -> None:
    """Plan files that differ from the store: the comparison reads them all."""
    plans = [swap_plan(f"new-{i:04d}") for i in range(count)]
    (daemon.folder / "b.yaml").write_text(json.dumps({"plans": plans}))


class Tabs:
    """`TABS` page requests at once, each on its own thread."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.answers: list[dict[str, Any]] = []
        self.cond = daemon.gate.cond  # one condition: an answer or a thread held wakes `settled`
        self.threads = [threading.Thread(target=self._get, daemon=True) for _ in range(TABS)]
        for thread in self.threads:
            thread.start()

    def _get(self) -> None:
        try:
            answer = httpx.get(self.daemon.url + "/api/status", timeout=WAIT).json()
        except httpx.HTTPError as exc:
            answer = {"error": repr(exc)}
        with self.cond:
            self.answers.append(answer)
            self.cond.notify_all()

    def settled(self) -> None:
        """Wait until every request is answered or held at the gate."""
        gate = self.daemon.gate

        def done() -> bool:
            held = len(gate.inside)
            return held >= 1 and len(self.answers) + held >= TABS

        with self.cond:
            assert self.cond.wait_for(done, timeout=WAIT), (len(self.answers), self.answers)

    def finish(self) -> None:
        self.daemon.gate.open()
        for thread in self.threads:
            thread.join(WAIT)


def _tabs_at_the_gate(daemon: Daemon) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]]]:
    """`TABS` page requests at once, let through once every one is answered or held:
    how many comparisons were held at the gate, the answers given meanwhile, and
    every answer."""
    tabs = Tabs(daemon)
    try:
        tabs.settled()
        held = len(daemon.gate.inside)
        waiting = list(tabs.answers)
    finally:
        tabs.finish()
    return held, waiting, tabs.answers


def test_a_claim_is_not_held_up_by_page_tabs_comparing_plan_files(daemon: Daemon) -> None:
    _edit_files(daemon, 200)
    tabs = Tabs(daemon)
    try:
        tabs.settled()  # a comparison (or several) under way, held where it spends its time
        with daemon.runtime.store.factory() as session:
            plan = store_plans.get_plan(session, "due")
        assert plan is not None
        slot = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1)
        # the runner's claim, through the daemon's own run store and writer engine
        claimed = daemon.runtime.runs.claim(plan, slot, now=datetime.now(UTC),
                                            trigger="schedule", claimed_by="host:1")  # fmt: skip
    finally:
        tabs.finish()
    assert claimed is not None
    assert claimed.scheduled_for == slot
    assert daemon.writer_checkouts == []  # the page never took a writer connection


def test_one_comparison_at_a_time_the_other_tabs_are_not_held(daemon: Daemon) -> None:
    _edit_files(daemon, 200)
    held, waiting, answers = _tabs_at_the_gate(daemon)
    assert held == 1, f"{held} comparisons at once"
    assert len(waiting) == TABS - 1
    # nothing compared yet: they say so, and not that the store is unavailable
    for answer in waiting:
        assert answer["plan_files"] is None, answer.get("plan_files") or answer
        assert answer["text"]["plan_files"] == "unknown: not compared yet"
    assert len(answers) == TABS
    done = [a for a in answers if a["plan_files"] is not None]
    assert len(done) == 1
    assert "+ new-0000" in done[0]["text"]["plan_files"]


def test_while_one_tab_compares_the_others_get_the_last_answer(daemon: Daemon) -> None:
    daemon.gate.open()
    first = httpx.get(daemon.url + "/api/status", timeout=WAIT).json()
    assert first["plan_files"]["in_sync"] is True
    daemon.gate = Gate()  # held again
    event.listen(Engine, "before_cursor_execute", daemon.gate.hook)
    try:
        _edit_files(daemon, 200)
        daemon.clock[0] += FILES_EVERY  # the page's answer is due again
        held, waiting, _ = _tabs_at_the_gate(daemon)
    finally:
        event.remove(Engine, "before_cursor_execute", daemon.gate.hook)
    assert held == 1, f"{held} comparisons at once"
    assert [a["plan_files"]["in_sync"] for a in waiting] == [True] * (TABS - 1)  # a bit stale
    after = httpx.get(daemon.url + "/api/status", timeout=WAIT).json()
    assert after["plan_files"]["in_sync"] is False
    assert "+ new-0000" in after["text"]["plan_files"]
    assert daemon.writer_checkouts == []
