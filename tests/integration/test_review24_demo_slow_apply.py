"""`jupcron demo` on a machine slow enough that a plan's moment passes before `plans
apply` stores it. Such a plan (an `at:` already past) has no slot and never runs:
seen at the end of a loaded `make test`, where the demo's crash plan never fired,
there was no crash to recover from, and the demo still ended with status 0. The
demo now sees the plan stored with no slot, starts the story again further ahead
on an empty database, and says so.

Real components: the demo's workspace (keypair, migrated SQLite, emulator on
loopback), the real `jupcron plans apply` subprocess, the store read back. The
slow machine is a workspace whose plans were stamped 30 s before the apply."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import text

from jupcron.demo.driver import Demo
from jupcron.demo.watch import PlainReporter
from jupcron.demo.workspace import CRASH_PLAN, LEAD, Workspace, create
from jupcron.store.engine import make_engine


def stored(url: str) -> tuple[dict[str, str | None], int]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            plans = {r.name: r.next_fire for r in conn.execute(text(
                "SELECT name, next_fire FROM plans"))}  # fmt: skip
            runs = conn.execute(text("SELECT count(*) FROM runs")).scalar_one()
    finally:
        engine.dispose()
    return plans, int(runs)


def applied(ws: Workspace) -> tuple[str, dict[str, str | None], int]:
    """The demo's apply on `ws`: what it said, the plans and the run count stored."""
    out = io.StringIO()
    demo = Demo(ws, PlainReporter(out), out)
    try:
        demo.apply_plans()
        plans, runs = stored(ws.db_url)
    finally:
        demo.close()
        ws.close()
    return out.getvalue(), plans, runs


def test_plans_whose_moment_passed_before_the_apply_are_stamped_again_ahead(
    tmp_path: Path,
) -> None:
    ws = create(tmp_path, now=datetime.now(UTC) - timedelta(seconds=30))
    said, plans, runs = applied(ws)
    assert said.count("$ jupcron --config") == 2, said  # applied twice
    late = f"this machine took too long: {', '.join(sorted(p.name for p in ws.plans))} came"
    assert late in said, said  # all seven were due 24 to 12 s before the first apply
    assert f"the plans again, {LEAD * 2:g} s ahead" in said, said
    assert f"warning: plan '{CRASH_PLAN}' has no fire time" in said  # the first apply's
    assert sorted(plans) == sorted(p.name for p in ws.plans)
    assert all(when is not None for when in plans.values()), plans  # every plan will run
    first = min(datetime.fromisoformat(str(w)) for w in plans.values())
    assert first.replace(tzinfo=UTC) == ws.start.replace(microsecond=0)  # the new stamping
    assert runs == 0  # a fresh database: nothing of the first stamping is left
    body = (ws.plans_dir / "demo.yaml").read_text()
    assert ws.start.replace(microsecond=0).isoformat() in body


def test_an_apply_in_time_is_made_once(tmp_path: Path) -> None:
    said, plans, _ = applied(create(tmp_path, lead=60))
    assert said.count("$ jupcron --config") == 1, said
    assert "took too long" not in said
    assert all(when is not None for when in plans.values())
