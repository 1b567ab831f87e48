"""Bidi overrides (U+202E reverses what follows) in text an operator reads in the
CLI: a pause reason in `jupcron status`'s head, a plan's description in `plans
apply`'s field diff, shown as a visible escape (daemon/visible.py), never obeyed."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory, swap_plan

RLO = "\u202e"


def test_bidi_overrides_are_shown_as_escapes_in_status_and_plans_apply(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_plans(swap_plan("tick", {"every": "1h"}))
    env.apply()
    plan = swap_plan("tick", {"every": "1h"})
    plan["description"] = f"buy {RLO}lobmys LOS"
    env.write_plans(plan)
    applied = env.jupcron("plans", "apply")
    assert applied.returncode == 0, applied.stderr
    assert RLO not in applied.stdout
    assert "\\u202elobmys" in applied.stdout
    paused = env.jupcron("pause", "tick", "--reason", f"price feed {RLO}dab")
    assert paused.returncode == 0, paused.stderr
    shown = env.jupcron("status")
    assert shown.returncode == 0, shown.stderr
    assert RLO not in shown.stdout
    assert "price feed \\u202edab" in shown.stdout
