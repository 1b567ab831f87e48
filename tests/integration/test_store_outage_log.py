"""A database that stays down is logged at its first loop turn, then at most once a
minute with the turns failed since, and once when it answers again: not a line a
second (an hour's outage used to write thousands of `store_unavailable` lines).
The real SQLite store made unreachable (its file moved away, the pool emptied); the
time between turns is the status's clock seam, not a sleep."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from jupcron.app import Runtime
from jupcron.listen.metrics import Metrics
from jupcron.service.alerts import AlertEvent
from jupcron.service.notify import Notifier
from jupcron.service.status import STORE_LOG_EVERY, Status
from jupcron.store.engine import sqlite_file


@pytest.fixture
def runtime(rig_runtime: Runtime) -> Runtime:
    return rig_runtime


def test_a_long_store_outage_is_a_few_lines_not_one_per_turn(runtime: Runtime) -> None:
    now = [1000.0]
    said: list[AlertEvent] = []
    status = Status(config=lambda: runtime.config, metrics=Metrics(), notifier=Notifier({}),
                    degraded=list, alert=lambda event, text: said.append(event),
                    monotonic=lambda: now[0])  # fmt: skip
    status.runtime = runtime
    path = sqlite_file(runtime.config.database.url)
    assert path is not None
    status.update(leader=True)
    assert status.store_ok

    path.rename(path.with_name("elsewhere.db"))  # the store down: no file, no connection
    runtime.store.engine.dispose()
    status.close()  # and the count's reading engine (SQLite): no connection left either
    with capture_logs() as logs:
        for _ in range(3600):  # an hour of loop turns, one a second
            status.update(leader=True)
            now[0] += 1.0
        assert not status.store_ok
        path.with_name("elsewhere.db").rename(path)  # back
        status.update(leader=True)
    assert status.store_ok

    down = [e for e in logs if e["event"] == "store_unavailable"]
    assert 1 <= len(down) <= 3600 / STORE_LOG_EVERY + 1, len(down)
    assert "repeats" not in down[0]  # the first turn: said at once
    assert down[-1]["repeats"] >= 1  # later: how many turns failed since the last line
    assert sum(e.get("repeats", 0) for e in down) + len(down) <= 3600
    back = [e for e in logs if e["event"] == "store_recovered"]
    assert len(back) == 1
    assert back[0]["failures"] == 3600
    assert said == [AlertEvent.STORE_DOWN, AlertEvent.STORE_DOWN]  # down once, back once
