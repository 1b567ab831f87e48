"""The report's value now and unrealised P&L, as a person reads them in the table,
on SQLite and PostgreSQL: they are amounts of the quote token, so they read to that
token's own unit — a treasury-sized sale (tens of millions of USDC) is not rounded
to a few significant digits, and what was received in the quote token reads as
exactly what the received column says."""

from __future__ import annotations

from decimal import Decimal

from jupcron.report.build import build
from jupcron.report.rows import table_row
from tests.fixtures.follow import SOL, FollowRig, FollowRigFactory
from tests.fixtures.runner import USDC
from tests.integration.test_report_units import refresh

BIG_SALE = 1_000_000 * 10**9 + 123_456_789  # a million SOL and change, in lamports


def _figure(cell: str, unit: str) -> Decimal:
    """The number of a table cell such as ``+12.5 USDC``."""
    number, _, shown_unit = cell.partition(" ")
    assert shown_unit == unit, cell
    return Decimal(number)


def treasury_sale(f: FollowRig) -> FollowRig:
    """`f` after a sale of `BIG_SALE` lamports (plan ``treasury-sale``) for USDC, its
    fills refreshed: more than a hundred million USDC received."""
    f.rig.emulator.ledger.set_balance(f.rig.wallet.address, SOL, BIG_SALE + 10**12)
    plan = f.rig.plan("swap", {"inputMint": SOL, "outputMint": USDC, "amount": BIG_SALE},
                      name="treasury-sale")  # fmt: skip
    f.fire(plan)
    refresh(f, with_rpc=False)
    return f


def test_value_now_and_pnl_of_a_large_sale_read_to_the_quote_tokens_unit(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = treasury_sale(make_follow_rig(db_url))
    with f.engine.connect() as conn:
        (report,), known = build(conn, plan="treasury-sale")
    data, row = report.as_dict(known), table_row(report, known)
    received = Decimal(str(data["received_ui"]))
    assert received > 10**8  # the sale brought in more than a hundred million USDC
    assert data["price_quote"] == "USDC"  # the quote token is what was received
    # the value now of what was received, in the quote token, is what was received
    assert _figure(row["received"], "USDC") == received
    assert _figure(row["value_now"], "USDC") == received
    # the P&L reads to one base unit of USDC (the JSON keeps every digit)
    pnl = Decimal(str(data["unrealised_pnl"]))
    shown = _figure(row["unrealised_pnl"], "USDC")
    assert abs(shown - pnl) <= Decimal("0.000001"), (shown, pnl)
