"""`jupcron report --total` (and the totals under the per-plan table) round the USD
value and P&L to cents: a loss under half a cent read ``unrealised P&L -0.00 USD``, a
sign for an amount the line itself says is zero (the per-plan column already reads
``+0`` there: `jupcron.report.rows._signed`)."""

from __future__ import annotations

from typing import Any

from jupcron.report.rows import total_lines


def _total(value: str, pnl: str) -> dict[str, Any]:
    return {
        "plans": 1, "fills": 2, "tokens": [], "unmeasured_runs": 0,
        "network_fee_lamports": "0", "priority_fee_lamports": "0",
        "current_value_usd": value, "unrealised_pnl_usd": pnl,
    }  # fmt: skip


def test_a_loss_below_half_a_cent_reads_zero_without_a_sign() -> None:
    text = total_lines(_total("12.004", "-0.004"))
    assert "value now: 12.00 USD, unrealised P&L +0.00 USD" in text, text


def test_a_value_of_negative_zero_reads_zero() -> None:
    text = total_lines(_total("-0.000", "-0.001"))
    assert "value now: 0.00 USD, unrealised P&L +0.00 USD" in text, text


def test_a_real_loss_keeps_its_sign() -> None:
    text = total_lines(_total("1,000.5".replace(",", ""), "-1234.567"))
    assert "value now: 1,000.50 USD, unrealised P&L -1,234.57 USD" in text, text
