"""The README's three SQL examples on the fills (spend per plan last week,
average price per plan, runs that spent but received nothing) run as written
on SQLite and, with the one documented change, on PostgreSQL, against fills the
emulator's keeper made and the follower stored."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from tests.fixtures.follow import DAY, FollowRigFactory, recurring_request

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
SECTION = README.split("## What the money did", 1)[1].split("\n## ", 1)[0]
EXAMPLES = re.findall(r"```sql\n(.*?)```", SECTION, flags=re.DOTALL)


def for_backend(sql: str, db_url: str) -> str:
    if db_url.startswith("postgresql"):  # the one change the README names
        return sql.replace("datetime('now', '-7 days')", "now() - interval '7 days'")
    return sql


def test_the_readme_has_the_three_fills_examples() -> None:
    assert len(EXAMPLES) == 3
    assert "FROM fills" in EXAMPLES[0]
    assert "-7 days" in EXAMPLES[0]
    assert "out_per_in" in EXAMPLES[1]
    assert "received IS NULL" in EXAMPLES[2]


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_the_readme_fills_examples_run_and_answer_right(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, days_ago=10)
    old = f.rig.plan("recurring", recurring_request(2), name="old-dca")
    f.fire(old)  # round 0 now (10 days ago), round 1 a day later: both before last week
    f.follower().poll()
    f.clock.advance(DAY)
    f.follower().poll()
    f.clock.advance(7 * DAY)  # 2 days ago now
    dca = f.rig.plan("recurring", recurring_request(3), name="dca")
    dca_run = f.fire(dca)
    waiting = f.rig.plan("recurring", {**recurring_request(2), "params": {"time": {
        **recurring_request(2)["params"]["time"], "startAt": int(f.clock.wall()) + 30 * DAY}}},
        name="later-dca")  # fmt: skip
    waiting_run = f.fire(waiting)  # placed, starts in a month: nothing received yet
    swap = f.rig.plan("swap", name="swap")
    f.fire(swap)
    f.follower().poll()
    f.clock.advance(DAY)
    f.follower().poll()  # 2 of the 3 rounds of dca
    ledger = f.ledger_fills(f.rig.run(dca_run).order_account or "")
    assert len(ledger) == 2

    week, price, nothing = (f.sql(for_backend(sql, db_url)) for sql in EXAMPLES)

    spent = {r["plan_name"]: (int(r["spent"]), int(r["received"]), r["fills"]) for r in week}
    assert spent["dca"] == (sum(x["in"] for x in ledger), sum(x["out"] for x in ledger), 2)
    assert spent["swap"][0] == 5_000_000
    assert "old-dca" not in spent  # its fills are older than a week
    by_plan = {r["plan_name"]: r for r in price}
    for name in ("dca", "old-dca", "swap"):
        report = f.report(name)
        expected = Decimal(report.received) / Decimal(report.spent)
        assert Decimal(str(by_plan[name]["out_per_in"])) == pytest.approx(
            expected, rel=Decimal("1e-9")
        )
        assert by_plan[name]["fills"] == len(report.fills)
    assert [r["run_id"] for r in nothing] == [waiting_run]
    assert nothing[0]["spent"] is None
