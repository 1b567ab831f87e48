"""Failpoint specs from $JUPCRON_FAILPOINTS: name, pass number, action (kill or stall)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from jupcron import failpoints


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("after_sign", {"after_sign": (1, "kill")}),
        ("after_sign:3", {"after_sign": (3, "kill")}),
        ("after_sign=stall", {"after_sign": (1, "stall")}),
        (
            "after_sign:2=stall, after_claim",
            {"after_sign": (2, "stall"), "after_claim": (1, "kill")},
        ),
        ("after_order=kill", {"after_order": (1, "kill")}),
        ("", {}),
    ],
)
def test_specs(text: str, expected: dict[str, tuple[int, str]]) -> None:
    assert failpoints._parse_actions(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("after_sing", "unknown failpoint 'after_sing'"),
        ("after_sign=pause", "unknown failpoint action 'pause'; known: kill, stall"),
    ],
)
def test_bad_specs_are_refused_with_the_known_names(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        failpoints._parse_actions(text)


PASSES = """
import sys
from jupcron import failpoints
failpoints.load_from_env()
failpoints.hit("after_sign", "other-plan")
print("alive after another plan's pass", flush=True)
failpoints.hit("after_sign", "crash-plan")
print("alive after its own plan's pass", flush=True)
"""


def test_a_failpoint_armed_for_a_plan_kills_only_at_that_plans_pass() -> None:
    """``after_sign@PLAN``: the demo's crash is its crash plan's, however its other
    plans' runs interleave on a loaded machine (before, the first run to sign died)."""
    env = {**os.environ, failpoints.ENV: "after_sign@crash-plan"}
    done = subprocess.run([sys.executable, "-c", PASSES], env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.stdout.splitlines() == ["alive after another plan's pass"], done.stderr
    assert done.returncode == -signal.SIGKILL
