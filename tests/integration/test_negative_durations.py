"""A duration is never negative: `jitter: -5` was stored as -5 (and read as no jitter),
`grace: -5` refused with a message about jitter. Both are refused at apply, with the
field named, and nothing is stored; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.scheduling.schedule import parse_duration
from jupcron.store import plans as store_plans
from jupcron.store.engine import make_engine, session_factory, transaction
from tests.fixtures.plans import PlanFiles, swap_plan


@pytest.mark.parametrize("field", ["jitter", "grace"])
def test_a_negative_duration_in_a_plan_is_refused_and_nothing_stored(
    db_url: str, plan_files: PlanFiles, field: str
) -> None:
    plan = swap_plan("neg", schedule={"every": "1h", field: -5})
    engine = make_engine(db_url)
    factory = session_factory(engine)
    try:
        with pytest.raises(PlanError) as refused:
            apply_paths(factory, [plan_files({"a.yaml": [plan]})], now=datetime.now(UTC))
        assert f"schedule.{field}: duration must not be negative" in str(refused.value)
        with transaction(factory) as session:
            assert store_plans.get_plan(session, "neg") is None
    finally:
        engine.dispose()


@pytest.mark.parametrize("value", [-1, "-5"])
def test_a_negative_duration_is_refused(value: object) -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        parse_duration(value, what="jitter")
