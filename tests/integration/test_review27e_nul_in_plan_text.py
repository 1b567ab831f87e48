"""A plan's text holding a NUL character (YAML's ``"\\0"`` or ``"\\x00"``, JSON's
``"\\u0000"`` in a double-quoted string: the file itself holds no NUL byte, which
is refused) is a problem at its line, on every store: PostgreSQL cannot hold NUL
in text, so on it the apply stopped at the write with the database's error
(SIGHUP's reload: an exception no caller expects), and SQLite kept a value no
terminal shows whole."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jupcron.errors import PlanError
from jupcron.plans.apply import apply_paths
from jupcron.store import plans as store_plans
from jupcron.store.engine import transaction
from tests.fixtures.plans import SOL, USDC, PlanFiles

PLAN = """name: nul
kind: swap
schedule: {{every: 1h}}
description: {description}
request:
  inputMint: {USDC}
  outputMint: {SOL}
  amount: 1000000
"""


@pytest.mark.parametrize(
    "description", ['"before\\0after"', '"before\\x00after"', '"before\\u0000after"']
)
def test_a_nul_in_a_plan_is_a_problem_and_nothing_is_applied(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles, description: str
) -> None:
    folder = plan_files({"a.yaml": PLAN.format(description=description, USDC=USDC, SOL=SOL)})
    with pytest.raises(PlanError) as caught:
        apply_paths(plans_factory, [folder], now=datetime.now(UTC))
    (problem,) = caught.value.problems
    assert problem.file.endswith("a.yaml"), problem
    assert problem.line == 4, problem
    assert "NUL" in problem.message, problem
    with transaction(plans_factory) as session:
        assert store_plans.revision(session) == 0


def test_a_nul_in_a_swaps_excluded_dexes_does_not_stop_the_apply(
    plans_factory: sessionmaker[Session], plan_files: PlanFiles
) -> None:
    """The request's free text (``excludeDexes``) is stored as JSON, which writes a NUL
    as the escape ``\\u0000``: the apply goes through on both stores."""
    text = PLAN.format(description="x", USDC=USDC, SOL=SOL) + '  excludeDexes: "a\\0b"\n'
    folder = plan_files({"a.yaml": text})
    apply_paths(plans_factory, [folder], now=datetime.now(UTC))
    with transaction(plans_factory) as session:
        assert store_plans.revision(session) == 1
