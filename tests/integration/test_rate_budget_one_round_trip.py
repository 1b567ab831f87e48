"""The shared rate budget's draw through libpq (`ratebudget._draw_direct`): the
same grants, waits and row as the SQLAlchemy statement it stands for, committed
in its one round trip."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from jupcron.store import ratebudget
from jupcron.store.engine import begin, make_engine
from jupcron.store.ratebudget import SharedBudget

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    made = make_engine(pg_url)
    yield made
    made.dispose()


def _row(engine: Engine, bucket: str) -> tuple[object, ...]:
    with engine.connect() as conn:
        found = conn.execute(
            text("SELECT rate, capacity, granted, drawn FROM api_rate_buckets WHERE bucket = :b"),
            {"b": bucket},
        ).one()
    return tuple(found)


def _draws(budget: SharedBudget) -> list[tuple[int, bool]]:
    out = []
    for want in (3, 1, 5, 2):
        grant = budget.draw(want)
        out.append((grant.tokens, grant.wait > 0))
    budget.block(30.0)
    grant = budget.draw(1)
    out.append((grant.tokens, grant.wait > 25))
    return out


def test_the_direct_draw_is_the_statements_draw(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = SharedBudget(engine, "direct:main", rate=0.5, capacity=4.0)
    seen = _draws(direct)
    monkeypatch.setattr(ratebudget, "_draw_direct", lambda conn, params: None)
    cursor = SharedBudget(engine, "cursor:main", rate=0.5, capacity=4.0)
    assert _draws(cursor) == seen == [(3, False), (1, False), (0, True), (0, True), (0, True)]
    assert _row(engine, "direct:main") == _row(engine, "cursor:main")


def test_the_direct_draw_commits_in_its_round_trip(engine: Engine) -> None:
    budget = SharedBudget(engine, "commit:main", rate=100.0, capacity=10.0)
    budget.draw(1)  # the row is made
    with begin(engine) as conn:
        row = ratebudget._draw_direct(conn, budget._params(4))
        assert row is not None
        assert int(row[0]) == 4
        assert conn.connection.dbapi_connection.info.transaction_status.name == "IDLE"
    assert _row(engine, "commit:main")[3] == 5  # both draws counted, from another session
