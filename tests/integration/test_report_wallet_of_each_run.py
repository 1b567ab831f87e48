"""`jupcron report` per wallet when a plan moved from one wallet to another: each fill
is the money of the wallet its run was signed by (`runs.wallet`), not of the wallet the
plan names now. Real runs over loopback to the emulator, signed by two real keypairs,
on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from jupcron.domain import RunStatus
from jupcron.report.build import build
from jupcron.report.rows import fill_rows, table_row, totals
from jupcron.store import plans as store_plans
from jupcron.store.audit import AuditFilter, audit_rows
from jupcron.store.engine import transaction
from jupcron.store.models import Plan
from jupcron.store.records import PlanRecord
from jupcron.web.views import ReportCache, plans_view
from tests.fixtures.runner import USDC, Rig, RigFactory, outcome_of
from tests.integration.test_wallets_runs import two_wallets

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


def move(rig: Rig, name: str, wallet: str) -> PlanRecord:
    """The plan moved to `wallet`, as `plans apply` stores it: a new version."""
    with transaction(rig.factory) as session:
        session.execute(
            update(Plan).where(Plan.name == name)
            .values(wallet=wallet, version=Plan.version + 1)
        )  # fmt: skip
    with rig.factory() as session:
        moved = store_plans.get_plan(session, name)
    assert moved is not None
    return moved


def fired_before_and_after_a_move(rig: Rig) -> tuple[int, int]:
    """One run of plan `weekly` signed by the default wallet, then (the plan moved to
    the savings wallet) one signed by the savings wallet; their run ids."""
    _, _, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)
    plan = rig.plan("swap", name="weekly")
    first = outcome_of(runner.fire(plan, SLOT))
    second = outcome_of(runner.fire(move(rig, "weekly", "savings"), SLOT + timedelta(days=7)))
    assert (first.status, second.status) == (RunStatus.SUCCEEDED, RunStatus.SUCCEEDED)
    assert (rig.run(first.run_id).wallet, rig.run(second.run_id).wallet) == ("default", "savings")
    return first.run_id, second.run_id


def test_a_moved_plans_earlier_fills_stay_with_the_wallet_that_paid_them(
    make_rig: RigFactory, db_url: str
) -> None:
    rig = make_rig(loopback=True, db_url=db_url)
    first, second = fired_before_and_after_a_move(rig)
    with rig.factory() as session:  # the audit trail, per wallet: each run once, its own
        audited = {
            name: [r["run_id"] for r in audit_rows(session, AuditFilter(wallet=name))]
            for name in ("default", "savings")
        }
    assert audited == {"default": [first], "savings": [second]}

    with rig.engine.connect() as conn:
        by_wallet = {name: build(conn, wallet=name)[0] for name in ("default", "savings")}
    # the report agrees with the audit: a wallet's report holds its own runs' fills only
    for name, run_id in (("default", first), ("savings", second)):
        fills = fill_rows(by_wallet[name])
        assert [(f["run_id"], f["wallet"]) for f in fills] == [(run_id, name)], name
        assert {r.wallet for r in by_wallet[name]} == {name}
        assert [r.plan_name for r in by_wallet[name]] == ["weekly"]
        spent = totals(by_wallet[name], {})["tokens"]
        assert [(t["mint"], t["spent"]) for t in spent if t["spent"] != "0"] == [
            (USDC, str(rig.run(run_id).in_amount))
        ], name


def test_every_wallets_report_keeps_each_fill_with_its_own_wallet(make_rig: RigFactory) -> None:
    """Without --wallet the plan has a row per wallet it traded with: the fills, the
    spent and the fees of one wallet are never added to the other's row."""
    rig = make_rig(loopback=True)
    first, second = fired_before_and_after_a_move(rig)
    with rig.engine.connect() as conn:
        reports, _ = build(conn)
    assert {f["run_id"]: f["wallet"] for f in fill_rows(reports)} == {
        first: "default", second: "savings",
    }  # fmt: skip
    rows = {r.wallet: r for r in reports}
    assert sorted(rows) == ["default", "savings"]
    for name, run_id in (("default", first), ("savings", second)):
        row = rows[name]
        assert [f.run_id for f in row.fills] == [run_id]
        assert row.spent == int(rig.run(run_id).in_amount or 0)
        assert row.paid_runs == 1  # the network fee of its own landed transaction
        assert row.runs == {"succeeded": 1}
    # the plan's current wallet's row comes first (the page's card)
    assert reports[0].wallet == "savings"


def test_the_table_says_whose_row_is_whose(make_rig: RigFactory) -> None:
    rig = make_rig(loopback=True)
    fired_before_and_after_a_move(rig)
    with rig.engine.connect() as conn:
        reports, known = build(conn)
    assert [table_row(r, known)["plan_name"] for r in reports] == [
        "weekly [savings]", "weekly [default]",
    ]  # fmt: skip
    assert [r.title for r in reports] == ["weekly [savings]", "weekly [default]"]


def test_a_plan_moved_to_a_wallet_that_has_not_run_it_is_listed_empty(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(loopback=True)
    _, _, wallets = two_wallets(rig)
    runner = rig.runner(wallets=wallets)
    first = outcome_of(runner.fire(rig.plan("swap", name="weekly"), SLOT))
    assert first.status is RunStatus.SUCCEEDED
    move(rig, "weekly", "savings")
    with rig.engine.connect() as conn:
        (row,) = build(conn, wallet="savings")[0]
        (old,) = build(conn, wallet="default")[0]
    assert (row.plan_name, row.wallet, row.fills, row.spent, row.runs) == (
        "weekly", "savings", [], 0, {},
    )  # fmt: skip
    assert (old.wallet, [f.run_id for f in old.fills], old.runs) == (
        "default", [first.run_id], {"succeeded": 1},
    )  # fmt: skip


def test_the_page_card_names_the_wallet_of_a_row_of_another_wallet(
    make_rig: RigFactory,
) -> None:
    """The card shows the plan's current wallet's row; the earlier wallet's row is listed
    among the others, led by its wallet's name (never added to the current one)."""
    rig = make_rig(loopback=True)
    first, _ = fired_before_and_after_a_move(rig)
    with rig.factory() as session:
        (card,) = plans_view(session, ReportCache(), datetime.now(UTC))["plans"]
    money = card["money"]
    assert (money["wallet"], money["fills"]) == ("savings", 1)
    (other,) = money["other_pairs"]
    assert (other["wallet"], other["fills"]) == ("default", 1)
    assert other["spent"] == str(rig.run(first).in_amount)
    assert card["text"]["other_pairs"].startswith("[default] ")
