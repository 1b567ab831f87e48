"""SIGTERM during an operator's command is taken as Ctrl-C is (`jupcron.cli.interrupt`)
only while that command runs: the handler before it is put back after it (an
in-process caller, pytest here, keeps its own), and the commands that handle their
own signals (`run`, `emulator`, `demo`) never see it installed (`fire` takes it as its
Ctrl-C: tests/e2e/test_fire_interrupted.py)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from jupcron.cli import interrupt
from jupcron.cli.main import cli


def test_the_handler_is_the_commands_only_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "p.yaml").write_text(
        "name: a\nkind: swap\nschedule: {every: 1d}\n"
        "request: {inputMint: EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v, "
        "outputMint: So11111111111111111111111111111111111111112, amount: 1000000}\n"
    )
    before = signal.getsignal(signal.SIGTERM)
    seen: list[object] = []

    real = interrupt.terminate_as_interrupt

    def looked() -> Callable[[], None]:  # the real one, and what it installed
        restore = real()
        seen.append(signal.getsignal(signal.SIGTERM))
        return restore

    monkeypatch.setattr(interrupt, "terminate_as_interrupt", looked)
    result = CliRunner().invoke(cli, ["plans", "validate", "--offline", str(tmp_path)])
    assert result.exit_code == 0, result.output
    seen.append(signal.getsignal(signal.SIGTERM))

    assert seen[0] is not before  # installed for the command
    assert seen[1] is before  # and put back after it
    assert signal.getsignal(signal.SIGTERM) is before


def test_said_tells_sigterm_from_ctrl_c() -> None:
    assert interrupt.said(KeyboardInterrupt()) == ("interrupted", 130)
    assert interrupt.said(interrupt.Terminated()) == ("terminated", 143)


def test_commands_with_their_own_signals_are_left_alone() -> None:
    assert {"run", "emulator", "demo"} <= interrupt.OWN_SIGNALS
    assert "fire" not in interrupt.OWN_SIGNALS  # its run is withdrawn on SIGTERM as on Ctrl-C
