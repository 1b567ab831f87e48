"""`jupcron portfolio`'s table rounds each position's value to cents: a borrow worth
less than half a cent read ``$-0.00`` (and so did a total that nets to nothing), a
sign for an amount the table itself says is zero."""

from __future__ import annotations

from jupcron.api.portfolio import Portfolio
from jupcron.cli.portfolio import render_table


def test_a_value_that_rounds_to_zero_has_no_sign() -> None:
    answer = Portfolio.model_validate({
        "owner": "o", "elements": [
            {"type": "borrowlend", "platformId": "lend", "label": "Borrow", "value": "-0.004"},
            {"type": "multiple", "platformId": "wallet-tokens", "label": "Wallet",
             "value": "-0.001"},
            {"type": "borrowlend", "platformId": "loss", "label": "Borrow", "value": "-2.5"},
        ],
    })  # fmt: skip
    text = render_table(answer)
    assert "$-0.00" not in text, text
    assert "lend  $0.00" in text, text
    assert "$-2.50" in text, text  # a real debt keeps its sign
