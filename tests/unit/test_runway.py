"""The runway maths (daemon/scheduling/runway.py): several plans on different schedules spending
one mint, mints of 6 and 9 decimals, what is left out (paused, dry run, disabled,
cancels), and an unknown balance that is neither 0, nor endless, nor low."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from jupcron.scheduling.runway import Need, needs_of, runway, runways, ui
from jupcron.store.records import PlanRecord
from jupcron.store.runway import RunwayState, runway_json, runway_text

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"  # 6 decimals
SOL = "So11111111111111111111111111111111111111112"  # 9 decimals
WALLET = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)  # a Tuesday
DAY = timedelta(days=1)


def plan(name: str, kind: str, request: dict[str, Any], schedule: dict[str, Any],
         *, enabled: bool = True, settings: dict[str, Any] | None = None) -> PlanRecord:  # fmt: skip
    return PlanRecord.from_mapping({
        "id": 1, "name": name, "kind": kind, "version": 1, "schedule": schedule,
        "request": request, "settings": settings or {}, "enabled": enabled,
        "description": None, "created_at": NOW, "updated_at": NOW,
    })  # fmt: skip


def swap(name: str, mint: str, amount: int, schedule: dict[str, Any], **kw: Any) -> PlanRecord:
    out = SOL if mint == USDC else USDC
    return plan(name, "swap", {"inputMint": mint, "outputMint": out, "amount": amount},
                schedule, **kw)  # fmt: skip


def recurring(name: str, deposit: int, schedule: dict[str, Any]) -> PlanRecord:
    params = {"time": {"inAmount": deposit, "numberOfOrders": 4, "interval": 86400}}
    return plan(name, "recurring", {"inputMint": USDC, "outputMint": SOL, "params": params},
                schedule)  # fmt: skip


def test_several_plans_on_different_schedules_are_counted_in_time_order() -> None:
    plans = [
        swap("daily", USDC, 10_000_000, {"cron": "0 9 * * *"}),  # 10 USDC at 09:00 UTC
        recurring("weekly", 100_000_000, {"cron": "0 12 * * 3"}),  # 100 USDC Wednesdays noon
    ]
    needs = needs_of(plans, WALLET)
    assert sorted((n.plan, n.amount) for n in needs) == [("daily", 10_000_000),
                                                         ("weekly", 100_000_000)]  # fmt: skip
    # 135 USDC: Tue 09:00 10, Wed 09:00 10, Wed 12:00 100 (120 so far), Thu 09:00 10 (130),
    # Fri 09:00 10 (140 > 135): four runs covered, the fifth is short
    found = runway(WALLET, USDC, 135_000_000, needs, NOW, 7 * DAY)
    assert found.runs == 4
    assert found.short_at == datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
    assert found.upcoming == 7 + 1  # seven daily runs and one weekly in the week
    assert found.needed == 7 * 10_000_000 + 100_000_000
    assert found.plans == ("daily", "weekly")
    assert found.covers_all is False
    assert found.low(5) is True
    assert found.low(4) is False
    assert found.low(0) is False


def test_a_mint_of_nine_decimals_and_one_of_six_each_get_their_runway() -> None:
    plans = [
        swap("sol-6h", SOL, 500_000_000, {"every": "6h"}),  # 0.5 SOL every 6 h
        swap("usdc-daily", USDC, 25_000_000, {"every": "1d"}),  # 25 USDC a day
    ]
    balances = {SOL: 1_200_000_000, USDC: 60_000_000}  # 1.2 SOL, 60 USDC
    found = runways(WALLET, balances.get, needs_of(plans, WALLET), NOW, 2 * DAY)
    assert [r.mint for r in found] == sorted([SOL, USDC])
    by_mint = {r.mint: r for r in found}
    assert by_mint[SOL].runs == 2
    assert by_mint[SOL].upcoming == 8
    assert by_mint[USDC].runs == 2
    assert by_mint[USDC].covers_all
    assert ui(by_mint[SOL].balance or 0, 9) == Decimal("1.2")
    assert ui(by_mint[USDC].balance or 0, 6) == Decimal("60")
    sol = RunwayState(by_mint[SOL], "SOL", 9, True, 3, 2 * 86400, NOW)
    assert sol.amount(by_mint[SOL].balance) == "1.2 SOL"
    assert runway_json(sol)["balance_ui"] == "1.2"
    assert runway_json(sol)["balance"] == "1200000000"  # base units, as text
    # 6 h slots from the epoch: 12:00 and 18:00 covered, 00:00 the next day short
    assert runway_text(sol) == (
        "2 of 8 run(s) in 2d, short at 2026-12-02T00:00:00Z LOW (alert below 3)"
    )
    usdc = RunwayState(by_mint[USDC], "USDC", 6, False, 3, 2 * 86400, NOW)
    assert runway_text(usdc) == "covers all 2 run(s) in the next 2d"


def test_a_balance_covering_every_run_of_the_horizon_is_never_low() -> None:
    once = swap("once", USDC, 5_000_000, {"at": "2026-12-02T00:00:00Z"})
    found = runway(WALLET, USDC, 5_000_000, needs_of([once], WALLET), NOW, 30 * DAY)
    assert (found.runs, found.upcoming, found.short_at) == (1, 1, None)
    assert found.low(3) is False  # one run left, covered: nothing to say
    empty = runway(WALLET, USDC, 0, needs_of([once], WALLET), NOW, 30 * DAY)
    assert (empty.runs, empty.low(3)) == (0, True)
    assert empty.short_at == datetime(2026, 12, 2, tzinfo=UTC)


def test_an_unknown_balance_is_unknown_never_zero_endless_or_low() -> None:
    needs = needs_of([swap("daily", USDC, 10_000_000, {"every": "1d"})], WALLET)
    found = runway(WALLET, USDC, None, needs, NOW, 7 * DAY, problem="balance unknown: HTTP 503")
    assert found.balance is None
    assert found.runs is None
    assert found.known is False
    assert found.covers_all is None
    assert found.low(3) is None
    assert found.upcoming == 7  # what is due is still known
    state = RunwayState(found, "USDC", 6, False, 3, 7 * 86400, NOW)
    assert runway_text(state) == "unknown (balance unknown: HTTP 503)"
    data = runway_json(state)
    assert data["balance"] is None
    assert data["balance_ui"] is None
    assert data["runs"] is None
    assert state.amount(found.balance) is None


def test_paused_dry_run_disabled_and_cancel_plans_spend_nothing() -> None:
    plans = [
        swap("active", USDC, 1_000_000, {"every": "1d"}),
        swap("paused", USDC, 1_000_000, {"every": "1d"}),
        swap("dry", USDC, 1_000_000, {"every": "1d"}, settings={"dry_run": True}),
        swap("off", USDC, 1_000_000, {"every": "1d"}, enabled=False),
        plan(
            "cancel",
            "trigger-cancel",
            {"order": WALLET, "computeUnitPrice": "auto"},
            {"every": "1d"},
        ),
    ]
    needs = needs_of(plans, WALLET, paused=lambda name: name == "paused")
    assert [n.plan for n in needs] == ["active"]
    assert needs_of(plans, WALLET, dry_run=True) == []  # safety.dry_run: nothing is spent


def test_runs_at_one_instant_take_the_larger_first_and_the_count_is_bounded() -> None:
    schedule = needs_of([swap("a", USDC, 1, {"every": "1h"})], WALLET)[0].schedule
    needs = [Need("small", WALLET, USDC, 1, schedule), Need("big", WALLET, USDC, 10, schedule)]
    found = runway(WALLET, USDC, 10, needs, NOW, DAY)
    assert found.runs == 1  # the big one fits, the small one at the same hour does not
    bounded = runway(WALLET, USDC, 10**12, needs, NOW, 365 * DAY, max_runs=100)
    assert bounded.upcoming == 100
    assert bounded.runs == 100
    assert bounded.covers_all
    other = runway("another-wallet", USDC, 0, needs, NOW, DAY)
    assert other.upcoming == 0
    assert other.plans == ()


@pytest.mark.parametrize(
    ("plans", "balance", "runs", "upcoming"),
    [
        (60, 10_000_000 * 100, 100, 60 * 2),  # 60 plans, two days: all 120 runs covered
        (60, 10_000_000 * 61, 61, 60 * 2),  # the first day's 60 and one of the second
        (3, 0, 0, 3 * 2),
        (1, 10_000_000, 1, 2),
    ],
)
def test_plans_sharing_a_schedule_count_as_many_runs_as_plans(
    plans: int, balance: int, runs: int, upcoming: int
) -> None:
    """Plans with one schedule and amount are merged into one stream of runs (100,000
    plans on 1,440 daily times cost 1,440 streams): the figures are those of each plan
    counted alone."""
    many = [swap(f"p{i:03d}", USDC, 10_000_000, {"cron": "0 9 * * *"}) for i in range(plans)]
    found = runway(WALLET, USDC, balance, needs_of(many, WALLET), NOW, 2 * DAY)
    assert (found.runs, found.upcoming) == (min(runs, upcoming), upcoming)
    assert found.needed == upcoming * 10_000_000
    bounded = runway(WALLET, USDC, balance, needs_of(many, WALLET), NOW, 2 * DAY, max_runs=7)
    assert bounded.upcoming == min(7, upcoming)


def test_a_runway_names_the_first_fifty_plans_and_counts_the_rest() -> None:
    many = [swap(f"p{i:03d}", USDC, 1, {"every": "1d"}) for i in range(120)]
    found = runway(WALLET, USDC, 10**9, needs_of(many, WALLET), NOW, DAY)
    assert found.plans == (*(f"p{i:03d}" for i in range(50)), "… and 70 more")
