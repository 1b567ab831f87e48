"""The shared rate budget when the database server's clock steps back (NTP correcting
a clock that ran fast, a VM restored or migrated): the bucket keeps its refill time in
the server's unix seconds, and only ever moved it forward, so after a step back of five
minutes no token came in for five minutes: every daemon on the key starved, their runs
waiting past their grace. The row is written here as the server wrote it before the
step (its times five minutes on from the clock's reading now)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from jupcron.store import ratebudget
from jupcron.store.engine import begin, make_engine
from jupcron.store.ratebudget import SharedBudget

pytestmark = pytest.mark.postgres

STEP = 300.0  # seconds the server's clock went back


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    made = make_engine(pg_url)
    yield made
    made.dispose()


def _step_back(engine: Engine, bucket: str) -> None:
    with begin(engine) as conn:
        conn.execute(
            text("UPDATE api_rate_buckets SET refilled_at = refilled_at + :s WHERE bucket = :b"),
            {"s": STEP, "b": bucket},
        )


@pytest.mark.parametrize("path", ["direct", "statement"])
def test_the_refill_goes_on_after_the_servers_clock_steps_back(
    engine: Engine, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path == "statement":  # the SQLAlchemy statement the libpq path stands for
        monkeypatch.setattr(ratebudget, "_draw_direct", lambda conn, params: None)
    budget = SharedBudget(engine, f"step:{path}", rate=20.0, capacity=2.0)
    assert budget.draw(2).tokens == 2  # the bucket is empty now
    _step_back(engine, budget.bucket)
    got = 0
    for _ in range(20):  # 20 tokens a second: one within the first few waits
        grant = budget.draw(1)
        if grant.tokens:
            got = grant.tokens
            break
        assert grant.wait < 1.0
        time.sleep(grant.wait)
    assert got == 1


def test_a_step_back_grants_nothing_for_the_time_it_undid(engine: Engine) -> None:
    budget = SharedBudget(engine, "step:none", rate=0.01, capacity=1.0)
    assert budget.draw(1).tokens == 1
    _step_back(engine, budget.bucket)
    assert budget.draw(1).tokens == 0  # the refill starts again from the new reading
    assert budget.draw(1).tokens == 0
