"""A plan whose own cap is below what one of its runs spends never runs.

The pre-flight skips a run whose amount would take its plan past ``caps.per_day`` or
``caps.per_week`` (`runner.preflight.reserve`: used + amount > cap); with the amount
alone above the cap, every run of the plan is skipped, forever. `plans validate`
refuses that plan, pointing at the cap, as it refuses an amount above
``max_in_amount``: a cap written in UI units (``per_day: 5`` for 5 USDC) is the
usual way to get there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupcron.plans.load import load_plans
from tests.fixtures.plans import recurring_plan, swap_plan, write_plans


@pytest.mark.parametrize(
    ("plan", "key", "line"),
    [
        (swap_plan("s", caps={"per_day": 5}), "per_day", "amount 1000000"),
        (swap_plan("s", caps={"per_day": 999_999}), "per_day", "amount 1000000"),
        (swap_plan("s", caps={"per_week": 500_000}), "per_week", "amount 1000000"),
        (recurring_plan("r", caps={"per_week": 10**7}), "per_week", "inAmount 100000000"),
    ],
)
def test_a_cap_below_one_runs_amount_is_refused(
    tmp_path: Path, plan: dict[str, Any], key: str, line: str
) -> None:
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    messages = [p.message for p in result.problems]
    assert result.plans == [], "a plan none of whose runs can pass its own cap was accepted"
    assert len(messages) == 1, messages
    assert messages[0].startswith(f"caps.{key} ")
    assert line in messages[0]
    assert "every run" in messages[0]


@pytest.mark.parametrize(
    "plan",
    [
        swap_plan("s", caps={"per_day": 1_000_000}),  # exactly one run fits
        swap_plan("s", caps={"per_day": 25_000_000, "per_week": 170_000_000}),
        recurring_plan("r", caps={"per_week": 10**8}),
    ],
)
def test_a_cap_one_run_fits_in_is_accepted(tmp_path: Path, plan: dict[str, Any]) -> None:
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    assert result.problems == []
    assert len(result.plans) == 1
