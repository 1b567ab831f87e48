"""`jupcron portfolio` against the emulator over loopback: a balance reads as a
decimal amount of its token, however small or large — never in exponent form
(``1E-9 SOL``), which a person misreads or a spreadsheet takes for a formula."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from jupcron.chain.wallet import Wallet
from jupcron.cli.main import cli
from jupcron.emulator import Emulator
from jupcron.emulator.server import EmulatorServer
from tests.fixtures.emulator import SOL, USDC


def portfolio(url: str, tmp_path: Path, owner: str) -> str:
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"api": {"base_url": url, "rate_limit": 50}}))
    result = CliRunner().invoke(cli, ["--config", str(config), "portfolio", owner])
    assert result.exit_code == 0, result.output
    return result.output


def test_one_lamport_and_a_treasury_read_as_plain_decimals(
    emulator: Emulator, emulator_server: EmulatorServer, tmp_path: Path
) -> None:
    owner = Wallet.generate().address
    emulator.ledger.set_balance(owner, SOL, 1)  # one lamport
    emulator.ledger.set_balance(owner, USDC, 123_456_789_123_456)  # 123,456,789.123456 USDC
    out = portfolio(emulator_server.url, tmp_path, owner)
    assert "0.000000001 SOL" in out, out
    assert "123456789.123456 USDC" in out, out
    assert "E-" not in out.upper(), out
