"""The loop turn's plan count: read again when the plans revision moves, not every
second (at 100,000 plans a count is a table scan a second, most of an idle daemon's
CPU). Statements are seen with SQLAlchemy's own event hook on the real engine."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event

from jupcron.app import Runtime
from jupcron.listen.metrics import Metrics
from jupcron.plans.apply import apply_paths
from jupcron.service.notify import Notifier
from jupcron.service.status import Status
from tests.fixtures.plans import PlanFiles, swap_plan


@pytest.fixture
def runtime(rig_runtime: Runtime) -> Runtime:
    return rig_runtime


def test_plans_are_counted_again_only_when_the_revision_moves(
    runtime: Runtime, plan_files: PlanFiles
) -> None:
    status = Status(config=lambda: runtime.config, metrics=Metrics(), notifier=Notifier({}),
                    degraded=list)  # fmt: skip
    status.runtime = runtime
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(args[2])  # the statement's text

    # the loop's count reads beside the writers, on an engine of its own (SQLite)
    event.listen(status.reading().kw["bind"], "before_cursor_execute", record)
    counts = lambda: [s for s in seen if "count(" in s.lower() and "plans" in s]  # noqa: E731
    folder = plan_files({"a.yaml": [swap_plan("a", every="1h"), swap_plan("b", every="1h")]})
    apply_paths(runtime.store.factory, [folder], now=datetime.now(UTC))

    status.update(leader=True)
    assert status.plan_count == 2
    assert status.text(leader=True).startswith("leader, 2 plans")
    assert len(counts()) == 1
    for _ in range(5):  # loop turns with nothing applied: the store is asked, not counted
        status.update(leader=True)
    assert status.store_ok
    assert len(counts()) == 1
    assert len(seen) > 5

    folder = plan_files({"a.yaml": [swap_plan("a", every="1h")]})  # b disabled
    apply_paths(runtime.store.factory, [folder], now=datetime.now(UTC))
    status.update(leader=True)
    assert status.plan_count == 1
    assert len(counts()) == 2
