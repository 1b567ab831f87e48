"""A plan file of mappings nested a few hundred deep (``x: {a: {a: …}}``, a few KB,
which the YAML reader takes) is a problem at its key, like any unknown key. The
loader's cache of checked requests and schedules walked the value recursively to
key it and raised `RecursionError` out of `load_plans`: `plans validate` and `apply`
said "unexpected RecursionError", and the daemon's SIGHUP reload (which expects a
`JupcronError`) ended the daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupcron.plans.load import load_plans
from tests.fixtures.plans import SOL, USDC

REQUEST = f"{{inputMint: {USDC}, outputMint: {SOL}, amount: 1000000"


def _nest(depth: int) -> str:
    return "{a: " * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [600, 800])
@pytest.mark.parametrize("where", ["request", "schedule"])
def test_deep_nesting_is_a_problem_at_its_key(tmp_path: Path, where: str, depth: int) -> None:
    nest = _nest(depth)
    request = f"{REQUEST}, x: {nest}}}" if where == "request" else f"{REQUEST}}}"
    schedule = f"{{every: 1h, x: {nest}}}" if where == "schedule" else "{every: 1h}"
    file = tmp_path / "deep.yaml"
    file.write_text(f"name: deep\nkind: swap\nschedule: {schedule}\nrequest: {request}\n")
    result = load_plans([file], ("default",))
    assert not result.plans
    (problem,) = result.problems
    assert problem.message.startswith(f"unknown key '{where}.x'"), problem
