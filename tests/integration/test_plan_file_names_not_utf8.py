"""A plan file whose name is not UTF-8 (a Latin-1 ``café.yaml`` copied from another
machine) is a bad file like any other: the apply is refused whole with its name, a
`PlanError`, and nothing is written. Its name went into the store as the plans'
``source`` and could not be encoded: a `UnicodeEncodeError` the daemon's SIGHUP
(which reports a `JupcronError` and goes on, daemon/service/reload.py) let through,
ending the daemon. Real store (SQLite and PostgreSQL), real files."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import JupcronError, PlanError
from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import swap_plan, write_plans

T0 = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)


def stored(factory: sessionmaker[Session]) -> dict[str, tuple[int, bool]]:
    with transaction(factory) as s:
        return {p.name: (p.version, p.enabled) for p in store_plans.all_plans(s)}


def test_a_plan_file_named_in_latin_1_refuses_the_apply_and_writes_nothing(
    plans_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    folder = tmp_path / "plans"
    write_plans(folder / "a.yaml", [swap_plan("alpha")])
    apply_paths(plans_factory, [folder], now=T0)
    before = stored(plans_factory)

    write_plans(folder / "a.yaml", [swap_plan("alpha", every="2h")])  # an edit, not applied
    latin = os.path.join(os.fsencode(folder), b"caf\xe9.yaml")  # 'café.yaml' in Latin-1
    with open(latin, "wb") as file:
        file.write(write_plans(tmp_path / "beta.yaml", [swap_plan("beta")]).read_bytes())
    try:  # what the daemon's SIGHUP does with plans.dir (it goes on after a JupcronError)
        apply_paths(plans_factory, [folder], now=T0 + timedelta(minutes=1), wallets=("default",))
    except JupcronError as exc:
        refused: JupcronError = exc
    else:
        pytest.fail("applied")
    assert isinstance(refused, PlanError)
    [problem] = refused.problems
    assert problem.message.startswith("the file's name is not UTF-8 text"), problem
    assert problem.file == f"{folder}/caf\\xe9.yaml"  # printable, and says which byte
    assert stored(plans_factory) == before
