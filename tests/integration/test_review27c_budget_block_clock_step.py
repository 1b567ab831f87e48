"""A 429's hold on the shared rate budget when the database server's clock steps
back (review 27c; review 22i fixed the refill time, not the hold).

A 429 writes ``blocked_until`` (the server's unix seconds) to the key's bucket, and
every daemon on the key holds off until then; a hold is never longer than the
pacer's `MAX_BLOCK` (two minutes). After a step back of the server's clock (NTP
correcting a clock that ran fast, a VM restored or migrated) a hold written shortly
before it lay as far ahead as the step: a 5 s hold, long over, held every daemon on
the key off for the five minutes undone, their runs waiting past their grace. A hold
further ahead than any hold can be is a step back: it is over.

The row is written here as the server wrote it before the step (its times five
minutes on from the clock's reading now)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from jupcron.store import ratebudget
from jupcron.store.engine import begin, make_engine
from jupcron.store.ratebudget import SharedBudget

pytestmark = pytest.mark.postgres

STEP = 300.0  # seconds the server's clock went back
AGO = 100.0  # seconds before the step that the 5 s hold was written


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    made = make_engine(pg_url)
    yield made
    made.dispose()


def _step_back(engine: Engine, bucket: str) -> None:
    """The row as the server wrote it before its clock went back: a 5 s hold written
    `AGO` seconds before the step (over), and the refill time of a moment ago."""
    with begin(engine) as conn:
        conn.execute(
            text(
                "UPDATE api_rate_buckets SET refilled_at = refilled_at + :s, "
                "blocked_until = EXTRACT(EPOCH FROM clock_timestamp())::float8 + :s - :ago + 5 "
                "WHERE bucket = :b"
            ),
            {"s": STEP, "ago": AGO, "b": bucket},
        )


@pytest.mark.parametrize("path", ["direct", "statement"])
def test_a_hold_over_before_the_step_holds_nobody_off(
    engine: Engine, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path == "statement":  # the SQLAlchemy statement the libpq path stands for
        monkeypatch.setattr(ratebudget, "_draw_direct", lambda conn, params: None)
    budget = SharedBudget(engine, f"hold:{path}", rate=20.0, capacity=2.0)
    assert budget.draw(1).tokens == 1  # one token left
    _step_back(engine, budget.bucket)
    grant = budget.draw(1)
    assert (grant.tokens, grant.wait) == (1, 0.0)


def test_a_new_hold_after_the_step_is_as_long_as_asked(engine: Engine) -> None:
    budget = SharedBudget(engine, "hold:new", rate=20.0, capacity=2.0)
    assert budget.draw(1).tokens == 1
    _step_back(engine, budget.bucket)
    budget.block(5.0)  # a 429 now: 5 s, not the stale hold's 205
    grant = budget.draw(1)
    assert grant.tokens == 0
    assert 0.0 < grant.wait <= 5.0
