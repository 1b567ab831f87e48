"""`jupcron report`'s totals end with a line on the swaps that landed with no answer to
measure them, naming each token by its symbol. The symbol comes from the token API;
the table above it passes every cell through the one neutraliser (daemon/visible.py),
this line printed it as sent: a symbol ``\\x1b[2K\\r…`` erased the line in the
operator's terminal and wrote over it."""

from __future__ import annotations

from jupcron.report.plan import PlanReport
from jupcron.report.rows import total_lines, totals
from jupcron.store.tokens import Token

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
EVIL = "EviLkfRDwTAfcsXsD2tgeb3ZqT3sM5dGJ8TbVGkQ3YUn"
SYMBOL = "\x1b[2K\rUSDC \u202eKO"


def test_the_unmeasured_line_shows_a_symbols_controls_as_escapes() -> None:
    evil = Token(EVIL, 6, SYMBOL, "api")
    report = PlanReport("buy", "swap", EVIL, USDC, unmeasured_runs=1, unmeasured_spent=5_000_000)
    report.input_token = evil
    text = total_lines(totals([report, PlanReport("idle", "swap")], {EVIL: evil}))
    assert "not in these figures" in text
    for control in ("\x1b", "\r", "\u202e"):
        assert control not in text, repr(text)
    assert "\\u001b[2K\\u000dUSDC \\u202eKO" in text, text
