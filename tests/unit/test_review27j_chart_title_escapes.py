"""A plan that traded several pairs has a chart per pair, titled with the pair's token
symbols (``buy (USDC → JUP)``). The symbols come from the token API; the chart passes
its axis labels through the one neutraliser (daemon/visible.py) so that a bidi
override in a symbol cannot reorder what the picture says, but the title kept the
symbols as sent: ``U+202E`` in a symbol turned the rest of the title around, on the
status page's card and in `jupcron report --chart`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jupcron.report.chart import card_svg
from jupcron.report.plan import Fill, PlanReport
from jupcron.store.tokens import Token

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
ODD = "Odd1kfRDwTAfcsXsD2tgeb3ZqT3sM5dGJ8TbVGkQ3YUn"
T0 = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


def test_a_pairs_title_shows_a_symbols_bidi_override_as_an_escape() -> None:
    plan = PlanReport("buy", "swap", USDC, ODD, pairs=2)
    plan.input_token = Token(USDC, 6, "USDC", "api")
    plan.output_token = Token(ODD, 6, "\u202eNUJ", "api")
    for minutes in (0, 60):
        plan.fills.append(Fill(1, T0 + timedelta(minutes=minutes), "execute", 1_000_000,
                               2_000_000, USDC, ODD))  # fmt: skip
    svg = card_svg(plan)
    assert svg is not None
    assert "\u202e" not in svg
    assert "buy (USDC → \\u202eNUJ): cumulative spend and value" in svg
