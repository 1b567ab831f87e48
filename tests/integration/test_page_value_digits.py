"""The status page's value now and P&L read as the report's table reads them (to
the quote token's unit, every whole digit kept), on SQLite: a treasury-sized sale
(over a hundred million USDC) was shown to eight significant digits, so the page
said 149850020 USDC where the report said 149850018.499999."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from jupcron.web.text import plan_text
from jupcron.web.views import ReportCache, plans_view
from tests.fixtures.follow import FollowRigFactory
from tests.integration.test_report_value_digits import treasury_sale


def figures(text: str) -> tuple[Decimal, str, Decimal]:
    """``149850018.499999 USDC (P&L +12.5 USDC)`` -> (value, unit, P&L)."""
    value, unit, rest = text.split(" ", 2)
    assert rest.startswith("(P&L "), text
    assert rest.endswith(f" {unit})"), text
    return Decimal(value), unit, Decimal(rest.removeprefix("(P&L ").split(" ")[0])


def test_the_page_reads_a_large_value_to_the_quote_tokens_unit(
    make_follow_rig: FollowRigFactory, sqlite_url: str
) -> None:
    f = treasury_sale(make_follow_rig(sqlite_url))
    with f.rig.factory() as session:
        (card,) = plans_view(session, ReportCache(), f.clock.now)["plans"]
    money = card["money"]
    value, unit, _ = figures(card["text"]["value_now"])
    assert unit == "USDC"
    assert Decimal(money["current_value"]) > 10**8
    # to the base unit: the value now of what was received is what was received
    assert Decimal(value) == Decimal(money["received_ui"]), (card["text"]["value_now"], money)


def money(**given: Any) -> dict[str, Any]:
    return {"fills": 1, "price_quote": "USDC", "price_base": "SOL", **given}


def card(figures_: dict[str, Any]) -> dict[str, Any]:
    return {"name": "p", "description": None, "kind": "swap", "dry_run": False,
            "schedule": "every hour", "paused": None, "next_fires": [], "last_status": None,
            "last_scheduled_for": None, "last_error": None, "money": figures_}  # fmt: skip


def test_with_the_quote_tokens_decimals_the_page_reads_to_its_unit() -> None:
    """As `report.rows` (its ``_in_units``): to one base unit, -0 never shown."""
    shown = plan_text(card(money(current_value="149850018.4999994", quote_decimals=6,
                                 unrealised_pnl="-12.34567891")))["value_now"]  # fmt: skip
    assert shown == "149850018.499999 USDC (P&L -12.345679 USDC)"
    tiny = plan_text(card(money(current_value="5", quote_decimals=6,
                                unrealised_pnl="-0.0000001")))["value_now"]  # fmt: skip
    assert tiny == "5 USDC (P&L +0 USDC)"
