"""`jupcron portfolio`'s table prints what the Portfolio API sent: token symbols,
platform ids, labels. Every other table of the CLI passes such text through the one
neutraliser (daemon/visible.py): a terminal's escape sequence or a bidi override
in a symbol shows as an escape, never obeyed. A token anyone can mint names itself
``\\x1b[2K\\rSOL``: in the operator's terminal it erased the line it stood on and
wrote what it liked there (a fake balance, a fake total). Against the emulator over
loopback, its token list given such a symbol."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from jupcron.chain.wallet import Wallet
from jupcron.cli.main import cli
from jupcron.emulator import Emulator, common
from jupcron.emulator.server import EmulatorServer

EVIL = Wallet.generate().address  # a mint nobody knows
SYMBOL = "\x1b[2K\rSOL \u202eDSU"  # erase the line, carriage return; a bidi override


def test_a_token_symbol_from_the_api_cannot_drive_the_terminal(
    emulator: Emulator, emulator_server: EmulatorServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setitem(common.TOKENS, EVIL, common.Token(SYMBOL, 6, Decimal("1")))
    owner = Wallet.generate().address
    emulator.ledger.set_balance(owner, EVIL, 5_000_000)
    config = tmp_path / "jupcron.yaml"
    config.write_text(json.dumps({"api": {"base_url": emulator_server.url, "rate_limit": 50}}))
    result = CliRunner().invoke(cli, ["--config", str(config), "portfolio", owner])
    assert result.exit_code == 0, result.output
    out = result.output
    for control in ("\x1b", "\r", "\u202e"):
        assert control not in out, repr(out)
    assert "\\u001b[2K\\u000dSOL \\u202eDSU" in out, out  # shown, as written
