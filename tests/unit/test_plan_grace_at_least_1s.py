"""`grace: 0` (a fire may start 0 s late) can never be met: the daemon starts a fire a
few milliseconds after its slot at best, so every slot of such a plan was recorded
`skipped` as missed while the daemon ran, and the plan never ran. The plan format
refuses it with a clear reason instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.plans.load import load_plans
from tests.fixtures.plans import swap_plan, write_plans


@pytest.mark.parametrize("grace", [0, "0", "0s", "0m"])
def test_a_zero_grace_is_refused(tmp_path: Path, grace: object) -> None:
    plan = swap_plan("strict", every="1m")
    plan["schedule"]["grace"] = grace
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    assert result.plans == []
    assert len(result.problems) == 1
    assert "grace must be at least 1s" in str(result.problems[0])


@pytest.mark.parametrize("grace", [1, "1s", "5m"])
def test_a_grace_of_a_second_or_more_is_kept(tmp_path: Path, grace: object) -> None:
    plan = swap_plan("strict", every="1m")
    plan["schedule"]["grace"] = grace
    result = load_plans([write_plans(tmp_path / "p.yaml", plan)])
    assert result.problems == []
    assert result.plans[0].spec.schedule.parsed().grace >= 1
