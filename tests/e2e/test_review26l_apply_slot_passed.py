"""`jupcron plans apply` whose write comes after a new plan's fire time that was still
ahead when it began: the plan is stored without it (an `at:` plan with no slot at
all, never to run), and the apply said nothing (exit 0, empty stderr). It now warns,
as it warns of an `at:` already past when it began (exit 0: the plan is stored).

The apply begins (`--now`) a millisecond before the plans' first fire time: reading
the files and the store takes longer than that."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import text

from jupcron.store.engine import make_engine
from tests.e2e.cli import jupcron
from tests.e2e.test_cli_plans import config_for
from tests.fixtures.plans import PlanFiles, swap_plan

NOW = "2024-12-31T23:59:59.999Z"  # a millisecond before 2025-01-01T00:00:00Z


def test_apply_warns_of_a_fire_time_that_passed_while_it_ran(
    tmp_path: Path, sqlite_url: str, plan_files: PlanFiles
) -> None:
    at = swap_plan("new-year")
    at["schedule"] = {"at": "2025-01-01T00:00:00Z"}
    folder = plan_files({"a.yaml": [at, swap_plan("each-second", every="1s"),
                                    swap_plan("every-7m", every="7m")]})  # fmt: skip
    env = config_for(tmp_path, sqlite_url, folder)
    done = jupcron("plans", "apply", "--now", NOW, env=env)
    assert done.returncode == 0, done.stderr  # stored, as an at: already past is
    assert "+ new-year" in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, done.stderr  # not every-7m: 00:00 is none of its slots
    never = next(line for line in lines if "'new-year'" in line)
    assert never.startswith(f"{folder}/a.yaml: warning: plan 'new-year' has no fire time ")
    assert "2025-01-01T00:00:00+00:00 passed while the apply ran" in never
    assert never.endswith("it will never run")
    late = next(line for line in lines if "'each-second'" in line)
    assert re.fullmatch(
        rf"{re.escape(str(folder))}/a\.yaml: warning: plan 'each-second' was stored at "
        r"\S+ after its fire time 2025-01-01T00:00:00\+00:00, which passed while the "
        r"apply ran: that one does not run \(if it renames a plan, that plan ran it\); "
        r"its first is \S+",
        late,
    ), late
    engine = make_engine(sqlite_url)
    try:
        with engine.connect() as conn:
            nexts = dict(conn.execute(text("SELECT name, next_fire FROM plans")).all())
    finally:
        engine.dispose()
    assert nexts["new-year"] is None
    assert nexts["each-second"] is not None
    again = jupcron("plans", "apply", "--now", NOW, env=env)
    assert again.stderr == ""  # unchanged plans are not warned about again
