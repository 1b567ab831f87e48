"""`plans validate` refuses a price no market needs: a huge exponent or too many digits.

A plan's prices (``limits.max_price`` / ``min_price``, a recurring order's
``minPrice`` / ``maxPrice``, Trigger V2's USD prices) are exact decimals, turned into
exact fractions at run time (`jupcron.price.limits.minimum_out`). Text such as
``1e-999999999`` was a valid price: its ``Fraction`` has a billion-digit
denominator, and the run's worker thread stalled building it (``1e-10000000``
alone takes about 25 s). Now every price is held to 40 digits and to 1e-30 .. 1e30,
refused where it is written (file:line:col), through the `plans validate` command
itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from jupcron.cli.main import cli

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"
SWAP = f"""name: a
kind: swap
schedule: {{{{every: 1d}}}}
request: {{{{inputMint: {USDC}, outputMint: {SOL}, amount: 1000000}}}}
limits:
  {{key}}: {{value}}
  quote: USDC
"""
RECURRING = f"""name: r
kind: recurring
schedule: {{{{every: 1w}}}}
request:
  inputMint: {USDC}
  outputMint: {SOL}
  params:
    time:
      inAmount: 100000000
      numberOfOrders: 2
      interval: 86400
      {{key}}: {{value}}
"""
TRIGGER = f"""name: t
kind: trigger-v2-order
schedule: {{{{every: 1w}}}}
request:
  inputMint: {SOL}
  outputMint: {USDC}
  inputAmount: 100000000
  triggerMint: {SOL}
  triggerCondition: above
  expiresAfter: 7d
  {{key}}: {{value}}
"""
RANGE = "at most 40 digits, between 1e-30 and 1e30"


def validate(tmp_path: Path, text: str) -> tuple[int, str]:
    (tmp_path / "p.yaml").write_text(text)
    result = CliRunner().invoke(cli, ["plans", "validate", "--offline", str(tmp_path)])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("template", "key", "value", "where"),
    [
        (SWAP, "max_price", "1e-999999999", "6:3: limits.max_price"),
        (SWAP, "max_price", "'1e-999999999'", "6:3: limits.max_price"),
        (SWAP, "max_price", "1e999999999", "6:3: limits.max_price"),
        (SWAP, "max_price", "1.0e+999999999", "6:3: limits.max_price"),
        (SWAP, "max_price", "0.0000000000000000000000000000001", "6:3: limits.max_price"),
        (SWAP, "max_price", "1" + "0" * 31, "6:3: limits.max_price"),
        (SWAP, "max_price", "1." + "1" * 40, "6:3: limits.max_price"),
        (RECURRING, "maxPrice", "1e-999999999", "12:7: request.params.time.maxPrice"),
        (TRIGGER, "triggerPriceUsd", "1e999999999", "11:3: request.triggerPriceUsd"),
    ],
)
def test_a_price_with_a_huge_exponent_or_too_many_digits_is_refused(
    tmp_path: Path, template: str, key: str, value: str, where: str
) -> None:
    code, output = validate(tmp_path, template.format(key=key, value=value))
    assert code == 1, f"plans validate accepted {key}: {value}: {output}"
    assert f"p.yaml:{where}: " in output, output
    assert RANGE in output, output


@pytest.mark.parametrize(
    ("template", "key", "value"),
    [
        (SWAP, "max_price", "250"),
        (SWAP, "max_price", "0.000000000000000000000000000001"),  # 1e-30: the least
        (SWAP, "max_price", "1e30"),  # the most
        (SWAP, "max_price", "'1.000000000000000000000000000000000000000'"),  # 40 digits
        (SWAP, "max_price", "0.00000001234"),
        (RECURRING, "maxPrice", "0.008"),
        (TRIGGER, "triggerPriceUsd", "250.5"),
    ],
)
def test_prices_within_the_bounds_still_validate(
    tmp_path: Path, template: str, key: str, value: str
) -> None:
    code, output = validate(tmp_path, template.format(key=key, value=value))
    assert code == 0, output
    assert "ok: 1 plan" in output
